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
    recovery: DeviceRecovery = DeviceRecovery(), station: StationOptions? = nil
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
    let server = try station?.start(json: json)
    defer { server?.stop() }
    let observer = LiveRunnerObserver(
      printer: printer, processor: job.processor, keys: keys, tones: tones, showsMeter: showsMeter,
      station: server.map { StationReporter(feed: $0.feed) })
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
  private let station: StationReporter?

  init(
    printer: LivePrinter, processor: LiveProcessor, keys: TerminalKeys?, tones: ToneReporting?,
    showsMeter: Bool, station: StationReporter? = nil
  ) {
    self.station = station
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
    // One encoding of the event, for the JSON output and the station alike.
    let line = printer.mode == .json || station != nil ? LiveEventJSON.line(for: event) : nil
    if let line { station?.take(event, line: line) }
    switch event {
    case .meter: if showsMeter { printer.show(event, line: line) }
    case .tone(let tone):
      printer.show(event, line: line)
      tones?.reported(tone)
    default: printer.show(event, line: line)
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
