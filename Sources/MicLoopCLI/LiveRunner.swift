import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import ToneDecoding

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a live job and turns its ending into output, an exit status and at
/// most one error line. Shared by loopback and the live meter.
enum LiveRunner {
  static func run(
    configuration: DuplexConfiguration, settings: LiveSettings, record: String?, duration: Double?,
    json: Bool,
    showsMeter: Bool, acceptsKeys: Bool, tones: LiveTones? = nil,
    recovery: DeviceRecovery = DeviceRecovery()
  ) throws {
    var settings = settings
    settings.isAnalyzing = tones != nil
    var session: LiveSession<DeviceBackend>
    do {
      session = try LiveSession(
        configuration: configuration, backend: DeviceBackend(), settings: settings)
    } catch {
      throw CommandFailure(message: error.commandLineMessage)
    }
    let decoder: ToneDecoder?
    if let tones, let granted = session.unit.granted {
      do {
        decoder = try ToneDecoder(
          plans: tones.plans, sampleRate: Double(granted.sampleRate), settings: tones.settings)
      } catch { throw CommandFailure(message: error.commandLineMessage()) }
    } else {
      decoder = nil
    }
    var recorder: AudioFileWriter?
    if let record, let granted = session.unit.granted, let format = granted.inputFormat {
      do {
        recorder = try AudioFileWriter(
          path: record, sampleRate: Double(granted.sampleRate),
          channelCount: granted.inputChannelCount,
          encoding: format.fileEncoding)
      } catch { throw CommandFailure(message: error.description) }
    }
    let printer = LivePrinter(json: json)
    if let granted = session.unit.granted {
      printer.start(
        granted, capture: configuration.isInputEnabled ? configuration.captureDevice : nil,
        playback: configuration.isOutputEnabled ? configuration.playbackDevice : nil)
    }
    let keys = acceptsKeys && !json ? TerminalKeys() : nil
    defer { keys?.restore() }
    if !session.unit.isRealtime && ProcessInfoLite.isVerbose {
      StandardOutput.writeError("micloop: note: no real-time priority for the audio thread")
    }
    let processor = session.processor
    func describeGain() -> String {
      processor.isMuted
        ? "  MUTED" : "  gain \(DecimalFormatting.fixed(processor.gainDecibels, places: 0)) dB"
    }
    if configuration.isOutputEnabled && printer.mode == .terminal {
      printer.setStatus(describeGain())
    }
    // Sessions of devices that were lost: kept, never torn down, since a
    // driver that hung may never return from closing.
    var retired = [LiveSession<DeviceBackend>]()
    var outcome: LiveSession<DeviceBackend>.Outcome
    var xruns = 0
    var lostFrames = 0
    var filledFrames: Int64 = 0
    while true {
      do {
        outcome = try session.run(
          duration: duration, recorder: recorder, endsJob: !recovery.reconnects,
          shouldStop: {
            StandardOutput.checkReader()
            tones?.pollCommands()
            if interruptRequested.load(ordering: .relaxed) { return true }
            for key in keys?.read() ?? [] {
              switch key {
              case .up: processor.setGain(decibels: min(40, processor.gainDecibels.rounded() + 1))
              case .down:
                processor.setGain(decibels: max(-120, processor.gainDecibels.rounded() - 1))
              case .mute: processor.setMuted(!processor.isMuted)
              case .quit: return true
              case .clearClips: printer.clearClips()
              }
              if printer.mode == .terminal { printer.setStatus(describeGain()) }
            }
            return false
          },
          onEvent: { event in if showsMeter { printer.show(event) } },
          onInput: { samples in
            decoder?.process(samples) { event in
              tones?.admit(event) { printer.show($0) }
            }
          },
          onXrun: { bus, time, lost in printer.xrun(bus, time: time, lostFrames: lost) },
          onPause: { time, seconds in printer.paused(time: time, seconds: seconds) },
          onFeedback: { printer.feedback($0) })
      } catch {
        throw CommandFailure(message: error.commandLineMessage)
      }
      xruns += outcome.overruns + outcome.underruns
      lostFrames += outcome.lostFrames
      guard recovery.reconnects, let failure = outcome.failure, failure.isDeviceLost else { break }
      printer.deviceLost(time: outcome.duration, reason: failure.description)
      retired.append(session)
      // Opening the devices again prepares the processor for what they grant.
      let lostFormat = processor.format
      guard
        let back = DeviceReturn.wait(
          configuration: configuration, processor: processor,
          shouldStop: { interruptRequested.load(ordering: .relaxed) })
      else {
        // Stopped while waiting: end the job with what it has.
        outcome.failure = nil
        processor.finishMeter { event in if showsMeter { printer.show(event) } }
        recorder?.close()
        break
      }
      let gap = MonotonicClock.seconds - outcome.lastProgress
      if let granted = back.unit.granted,
        granted.sampleRate != lostFormat.sampleRate
          || (configuration.isInputEnabled && granted.inputChannelCount != lostFormat.channelCount)
      {
        recorder?.close()
        throw CommandFailure(
          message:
            "the device came back as \(granted.sampleRate) Hz, \(granted.inputChannelCount) channels, not as it was; start again"
        )
      }
      if recovery.fillsGaps, let recorder {
        let frames = Int64((gap * Double(processor.format.sampleRate)).rounded())
        do { try DeviceReturn.writeSilence(frames: frames, to: recorder) } catch {
          throw CommandFailure(message: error.description)
        }
        filledFrames += frames
      }
      printer.deviceBack(
        time: Double(processor.framesProcessed.load(ordering: .acquiring))
          / Double(processor.format.sampleRate), gap: gap,
        filled: recovery.fillsGaps && recorder != nil)
      session = back
    }
    outcome.recordedFrames += filledFrames
    decoder?.finish { event in tones?.admit(event) { printer.show($0) } }
    tones?.finish { printer.show($0) }
    printer.endLine()
    if let tones, tones.printsSummary {
      if json {
        StandardOutput.write(
          ToneEventFormat.jsonSummary(
            duration: outcome.duration, tones: tones.toneCount, sequences: tones.sequenceCount),
          flush: true)
      } else {
        StandardOutput.write(
          tones.summaryLine(duration: outcome.duration, xruns: xruns)
        )
      }
    } else if !showsMeter && !json {
      StandardOutput.write(
        "Ran \(DecimalFormatting.fixed(outcome.duration, places: 2)) s, \(xruns) xruns"
          + (lostFrames > 0 ? " (\(lostFrames) frames lost)" : "")
          + (record.map { ", recorded \(outcome.recordedFrames) frames to \($0)" } ?? ""))
    }
    StandardOutput.flush()
    tones?.waitForCommands()
    if let failure = outcome.failure {
      let saved =
        record.map { "; \(outcome.recordedFrames) frames already captured are saved in \($0)" }
        ?? ""
      throw CommandFailure(message: failure.commandLineMessage + saved)
    }
    if let failure = outcome.recordingFailure { throw CommandFailure(message: failure.description) }
    if let lost = processor.analysis?.dropped.load(ordering: .relaxed), lost > 0 {
      StandardOutput.writeError(
        "micloop: note: \(lost) input frames were not decoded because the decoder fell behind")
    }
    if outcome.droppedRecordingFrames > 0 {
      throw CommandFailure(
        message:
          "\(record ?? "recording"): \(outcome.droppedRecordingFrames) frames were lost because the disk could not keep up; record to a faster disk or tmpfs"
      )
    }
  }
}

/// What a live job does when its device or sound server goes away.
struct DeviceRecovery {
  /// Wait for the device to come back and carry on, instead of ending.
  var reconnects = false
  /// Fill the recording with silence as long as the gap.
  var fillsGaps = false
}

/// Waits for a lost device to come back (control thread).
enum DeviceReturn {
  /// Tries to open the devices again twice a second until they open or
  /// `shouldStop` says so; the session continues `processor`'s job.
  static func wait(
    configuration: DuplexConfiguration, processor: LiveProcessor, shouldStop: () -> Bool
  ) -> LiveSession<DeviceBackend>? {
    while !shouldStop() {
      if let session = try? LiveSession(
        configuration: configuration, backend: DeviceBackend(), processor: processor)
      {
        return session
      }
      usleep(500_000)
    }
    return nil
  }

  static func writeSilence(frames: Int64, to recorder: AudioFileWriter) throws(AudioFileError) {
    let block = 4096
    let silence = [Float](repeating: 0, count: block * recorder.channelCount)
    var left = frames
    while left > 0 {
      let count = Int(min(Int64(block), left))
      try silence.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
        try recorder.write(buffer.baseAddress!, frameCount: count)
      }
      left -= Int64(count)
    }
  }
}
