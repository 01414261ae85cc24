import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import TextFormatting
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a live job (`LiveJob`) and turns what it reports into output, its
/// keys into gain and mute, and its ending into an exit status and at most
/// one error line. Shared by loopback, the live meter and live tones.
/// Control thread.
enum LiveRunner {
  static func run(
    configuration: DuplexConfiguration, settings: LiveSettings, record: String?, duration: Double?,
    json: Bool,
    showsMeter: Bool, acceptsKeys: Bool, tones: ToneReporting? = nil,
    recovery: DeviceRecovery = DeviceRecovery()
  ) throws {
    var jobSettings = LiveJobSettings()
    jobSettings.live = settings
    jobSettings.duration = duration
    jobSettings.recordingPath = record
    jobSettings.tones = tones?.tones
    jobSettings.recovery = recovery
    let job: LiveJob<DeviceBackend>
    do {
      job = try LiveJob(configuration: configuration, settings: jobSettings)
    } catch {
      throw CommandFailure(message: error.commandLineMessage)
    }
    let printer = LivePrinter(json: json)
    if let granted = job.granted {
      printer.start(
        granted, capture: configuration.isInputEnabled ? configuration.captureDevice : nil,
        playback: configuration.isOutputEnabled ? configuration.playbackDevice : nil)
    }
    let keys = acceptsKeys && !json ? TerminalKeys() : nil
    defer { keys?.restore() }
    if !job.isRealtime && ProcessInfoLite.isVerbose {
      StandardOutput.writeError("micloop: note: no real-time priority for the audio thread")
    }
    let observer = LiveRunnerObserver(
      printer: printer, processor: job.processor, keys: keys, tones: tones, showsMeter: showsMeter)
    if configuration.isOutputEnabled && printer.mode == .terminal {
      printer.setStatus(observer.describeGain())
    }
    let outcome: LiveJob<DeviceBackend>.Outcome
    do {
      outcome = try job.run(observer: observer)
    } catch {
      throw CommandFailure(message: error.commandLineMessage)
    }
    printer.endLine()
    if let tones, let tally = job.tones, tones.printsSummary {
      if json {
        StandardOutput.write(
          ToneEventFormat.jsonSummary(
            duration: outcome.duration, tones: tally.toneCount, sequences: tally.sequenceCount),
          flush: true)
      } else {
        StandardOutput.write(
          ToneReporting.summaryLine(tally, duration: outcome.duration, xruns: outcome.xruns))
      }
    } else if !showsMeter && !json {
      StandardOutput.write(
        "Ran \(DecimalFormatting.fixed(outcome.duration, places: 2)) s, \(outcome.xruns) xruns"
          + (outcome.lostFrames > 0 ? " (\(outcome.lostFrames) frames lost)" : "")
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
    if outcome.undecodedFrames > 0 {
      StandardOutput.writeError(
        "micloop: note: \(outcome.undecodedFrames) input frames were not decoded because the decoder fell behind"
      )
    }
    if outcome.droppedRecordingFrames > 0 {
      throw CommandFailure(
        message:
          "\(record ?? "recording"): \(outcome.droppedRecordingFrames) frames were lost because the disk could not keep up; record to a faster disk or tmpfs"
      )
    }
  }
}

/// Prints what the live job reports, runs `--exec` for its tones, and
/// reads the terminal's keys and Ctrl-C between control cycles. Control thread.
final class LiveRunnerObserver: LiveJobObserver {
  private let printer: LivePrinter
  private let processor: LiveProcessor
  private let keys: TerminalKeys?
  private let tones: ToneReporting?
  private let showsMeter: Bool

  init(
    printer: LivePrinter, processor: LiveProcessor, keys: TerminalKeys?, tones: ToneReporting?,
    showsMeter: Bool
  ) {
    self.printer = printer
    self.processor = processor
    self.keys = keys
    self.tones = tones
    self.showsMeter = showsMeter
  }

  func describeGain() -> String {
    processor.isMuted
      ? "  MUTED" : "  gain \(DecimalFormatting.fixed(processor.gainDecibels, places: 0)) dB"
  }

  func handle(_ event: LiveJobEvent) {
    switch event {
    case .meter(let meter): if showsMeter { printer.show(meter) }
    case .tone(let tone):
      printer.show(tone)
      tones?.reported(tone)
    case .feedback(let feedback): printer.feedback(feedback)
    case .xrun(let bus, let time, let lostFrames):
      printer.xrun(bus, time: time, lostFrames: lostFrames)
    case .pause(let time, let seconds): printer.paused(time: time, seconds: seconds)
    case .audioLost(let time, let seconds, let cause):
      printer.lost(time: time, seconds: seconds, inPause: cause == .pause)
    case .deviceLost(let time, let failure):
      printer.deviceLost(time: time, reason: failure.description)
    case .deviceBack(let time, let gap, let filled):
      printer.deviceBack(time: time, gap: gap, filled: filled)
    case .connectionsRestored(let time, let connections):
      printer.connectionsRestored(time: time, connections)
    }
  }

  func shouldStop() -> Bool {
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
  }
}
