import ArgumentParser
import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop loopback`: microphone to speaker with gain, meter and recording.
struct Loopback: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Monitor the microphone on the speaker, with gain, a live meter and recording.",
    discussion: """
      Keys on a terminal: up/down arrow (or +/-) change the gain by 1 dB, m mutes, q quits. \
      Ctrl-C stops cleanly; a recording stays valid.
      """)

  @OptionGroup(title: "Devices") var devices: DeviceOptions
  @Option(
    name: .customLong("gain-db"), parsing: .unconditional,
    help: "Gain from microphone to speaker in dB.")
  var gainDecibels = 0.0
  @Flag(
    name: .customLong("no-limit"),
    help: "Do not soft-limit the output (it is still clipped, never wrapped).")
  var noLimit = false
  @Flag(help: "Show the live meter.")
  var meter = false
  @Flag(help: "Print JSON Lines (meter events, xruns, summary).")
  var json = false
  @Option(help: "Save the captured input losslessly to this file (.wav, .flac …).")
  var record: String?
  @Option(parsing: .unconditional, help: "Stop after this long (e.g. 30, 30s, 1500ms).")
  var duration: Seconds?
  @Option(help: "Decode these tone plans while monitoring (e.g. dtmf or dtmf,ccir).")
  var tones: String?
  @OptionGroup(title: "Talk detection") var talk: TalkOptions
  @OptionGroup(title: "Tone decisions (with --tones)") var decisions: ToneDecisionOptions

  func validate() throws {
    guard gainDecibels.isFinite, gainDecibels <= 40, gainDecibels >= -120 else {
      throw ValidationError("--gain-db must be between -120 and 40")
    }
    try duration?.require("--duration", atLeast: 0.001)
    if let tones { _ = try TonePlanList.parse(tones) }
  }

  func run() throws {
    var settings = LiveSettings()
    settings.gainDecibels = gainDecibels
    settings.isLimiting = !noLimit
    settings.isRecording = record != nil
    if meter || json {
      var meterSettings = MeterSettings()
      meterSettings.talk = talk.settings
      meterSettings.interval = StandardOutput.isTerminal && !json ? 0.05 : 0.1
      settings.meter = meterSettings
    } else {
      settings.meter = nil
    }
    try LiveRunner.run(
      configuration: devices.configuration(input: true, output: true), settings: settings,
      record: record,
      duration: duration?.value, json: json, showsMeter: meter || json, acceptsKeys: true,
      tones: try tones.map {
        LiveTones(
          plans: try TonePlanList.parse($0), decisions: decisions, printsSummary: false)
      })
  }
}

/// Runs a live job and turns its ending into output, an exit status and at
/// most one error line. Shared by loopback and the live meter.
enum LiveRunner {
  static func run(
    configuration: DuplexConfiguration, settings: LiveSettings, record: String?, duration: Double?,
    json: Bool,
    showsMeter: Bool, acceptsKeys: Bool, tones: LiveTones? = nil
  ) throws {
    var settings = settings
    settings.isAnalyzing = tones != nil
    SignalTrap.install()
    let session: LiveSession<ALSADevicePair>
    do { session = try LiveSession(configuration: configuration, settings: settings) } catch {
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
    let outcome: LiveSession<ALSADevicePair>.Outcome
    do {
      outcome = try session.run(
        duration: duration, recorder: recorder,
        shouldStop: {
          if interruptRequested.load(ordering: .relaxed) { return true }
          for key in keys?.read() ?? [] {
            switch key {
            case .up: processor.setGain(decibels: min(40, processor.gainDecibels.rounded() + 1))
            case .down: processor.setGain(decibels: max(-120, processor.gainDecibels.rounded() - 1))
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
        onXrun: { bus, time in printer.xrun(bus, time: time) })
    } catch {
      throw CommandFailure(message: error.commandLineMessage)
    }
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
          tones.summaryLine(duration: outcome.duration, xruns: outcome.overruns + outcome.underruns)
        )
      }
    } else if !showsMeter && !json {
      StandardOutput.write(
        "Ran \(DecimalFormatting.fixed(outcome.duration, places: 2)) s, \(outcome.overruns + outcome.underruns) xruns"
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
    if let lost = session.processor.analysis?.dropped.load(ordering: .relaxed), lost > 0 {
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

/// Environment switches read once (control thread).
enum ProcessInfoLite {
  static var isVerbose: Bool { getenvString("MICLOOP_VERBOSE") != nil }
  static func getenvString(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }
}

extension SampleFormat {
  /// The file encoding that keeps every bit of this device format.
  var fileEncoding: AudioFileEncoding {
    switch self {
    case .s16: return .pcm16
    case .s24, .s24Packed: return .pcm24
    case .s32: return .pcm32
    case .float: return .float
    }
  }
}
