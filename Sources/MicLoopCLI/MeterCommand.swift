import ArgumentParser
import Console
import Metering
import MicLoopKit

/// Options of the talk detector, shared by every command that detects talk.
struct TalkOptions: ParsableArguments {
  @Option(parsing: .unconditional, help: "Envelope attack time (e.g. 5ms).")
  var attack = Seconds(TalkDetectorSettings().attackTime)
  @Option(parsing: .unconditional, help: "Envelope release time (e.g. 40ms).")
  var release = Seconds(TalkDetectorSettings().releaseTime)
  @Option(
    parsing: .unconditional,
    help: "Talk starts this many dB above the noise floor (dBFS with --absolute).")
  var open = TalkDetectorSettings().openThreshold
  @Option(
    parsing: .unconditional,
    help: "Talk may end this many dB above the noise floor (dBFS with --absolute).")
  var close = TalkDetectorSettings().closeThreshold
  @Option(
    parsing: .unconditional, help: "Time the envelope must stay below --close before talk ends.")
  var hold = Seconds(TalkDetectorSettings().holdTime)
  @Flag(help: "Treat --open and --close as absolute dBFS instead of dB above the noise floor.")
  var absolute = false
  @Option(
    parsing: .unconditional,
    help:
      "Shift the talk decision by this many dB: positive opens on quieter talk, negative ignores more of a busy background (-20 to 20)."
  )
  var sensitivity = 0.0

  func validate() throws {
    guard open.isFinite, close.isFinite, abs(open) <= 200, abs(close) <= 200 else {
      throw ValidationError("--open and --close must be numbers of dB between -200 and 200")
    }
    try attack.require("--attack", atLeast: 0.0001, atMost: 10)
    try release.require("--release", atLeast: 0.0001, atMost: 10)
    try hold.require("--hold", atLeast: 0, atMost: 60)
    guard close <= open else {
      throw ValidationError("--close (\(close)) must not be above --open (\(open)); lower --close")
    }
    guard sensitivity.isFinite, (-20...20).contains(sensitivity) else {
      throw ValidationError("--sensitivity must be between -20 and 20 dB")
    }
    if absolute && open > 0 {
      throw ValidationError(
        "--open \(open) dBFS is above full scale; use a negative value with --absolute")
    }
  }

  var settings: TalkDetectorSettings {
    var settings = TalkDetectorSettings()
    settings.attackTime = attack.value
    settings.releaseTime = release.value
    settings.openThreshold = open
    settings.closeThreshold = close
    settings.holdTime = hold.value
    settings.isAbsolute = absolute
    settings.sensitivity = sensitivity
    return settings
  }
}

/// `micloop meter`: peak and RMS dBFS with talk/silence, from a file.
struct Meter: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "meter",
    abstract: "Measure peak and RMS levels (dBFS) and detect talk/silence.",
    discussion: """
      Prints a line per interval with a level bar, peak and RMS dBFS and TALK/silence, \
      then the talk segments and totals. --json prints JSON Lines ending with a summary.
      """)

  @Option(
    name: [.short, .long],
    help:
      "Audio file to meter (WAV, FLAC, OGG …); - reads standard input (any format; headerless PCM with --raw)."
  )
  var input: String?
  @Flag(
    help:
      "The input is headerless little-endian PCM, as rtl_fm writes: give --rate; --channels and --format default to 1 and s16."
  )
  var raw = false
  @OptionGroup(title: "Devices (without --input: meter live from the capture device)") var devices:
    DeviceOptions
  @Option(parsing: .unconditional, help: "Live: stop after this long (e.g. 30, 30s, 1500ms).")
  var duration: Seconds?
  @Flag(help: "Print JSON Lines instead of text.")
  var json = false
  @Option(
    parsing: .unconditional,
    help: "Time between level readings (default 0.1s; 0.05s for the live terminal meter).")
  var interval: Seconds?
  @Option(
    parsing: .unconditional,
    help: "Meter only this channel (1 = first); default: every channel, report the loudest.")
  var channel: Int?
  @Flag(help: "Report RMS with the AES17 convention (full-scale sine = 0 dB RMS).")
  var aes17 = false
  @Flag(
    help:
      "Also measure loudness (EBU R128 / ITU-R BS.1770-4): momentary and short-term LUFS per reading; integrated LUFS, loudness range, true peak (dBTP) in the summary."
  )
  var loudness = false
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "How the meter reading follows the signal: digital (IEC 60268-18 peak, 1 s hold), ppm1 (DIN), ppm2 (BBC), ebu (IEC 60268-10), vu (IEC 60268-17) or lufs (momentary loudness; implies --loudness).",
      valueName: "standard"))
  var ballistics = MeterBallistics.digital
  @OptionGroup(title: "Talk detection")
  var talk: TalkOptions
  @OptionGroup(title: "Monitoring station (live)") var station: StationOptions

  /// The meter's settings from the flags, for a file or live: readings
  /// every `--interval` (else `defaultInterval`), of `channel` (zero-based)
  /// or of every channel.
  func meterSettings(defaultInterval: Double, channel: Int?) -> MeterSettings {
    var settings = MeterSettings()
    settings.interval = interval?.value ?? defaultInterval
    settings.talk = talk.settings
    settings.rmsConvention = aes17 ? .aes17 : .sox
    settings.measuresLoudness = measuresLoudness
    settings.ballistics = ballistics
    settings.channel = channel
    return settings
  }

  /// Meters the capture device live until Ctrl-C or --duration.
  func runLive() throws {
    var settings = LiveSettings()
    settings.meter = meterSettings(
      defaultInterval: StandardOutput.isTerminal && !json ? 0.05 : 0.1,
      channel: try ChannelChoice.index(channel, capturing: devices.channels))
    try LiveRunner.run(
      configuration: devices.configuration(.capture), settings: settings,
      record: nil,
      duration: duration?.value, json: json, showsMeter: true, acceptsKeys: true,
      recovery: devices.recovery, station: station)
  }

  func validate() throws {
    try interval?.require("--interval", atLeast: 0.001, atMost: 86_400)
    if input != nil && station.http != nil {
      throw ValidationError("--http serves a live job; leave out --input to meter the device")
    }
    try duration?.require("--duration", atLeast: 0.001)
    try devices.validate(input: input, raw: raw)
    if let channel, !(1...64).contains(channel) {
      throw ValidationError("--channel counts from 1 to 64; use --channel 1 for the first channel")
    }
    // A device's or raw stream's rate is known now; a file's once it is open.
    if measuresLoudness && (input == nil || raw) {
      try LoudnessRate.check(rate: Double(devices.rate), option: loudnessOption)
    }
  }

  /// Whether loudness is measured: asked for, or read by the meter.
  var measuresLoudness: Bool { loudness || ballistics == .lufs }
  /// The option that asked for loudness, as messages name it.
  var loudnessOption: String { loudness ? "--loudness" : "--ballistics lufs" }

  func run() throws {
    guard let input else {
      let deviceGiven = devices.device != nil || devices.capture != nil
      do { return try runLive() } catch var failure as CommandFailure where !deviceGiven {
        failure.message += "; or meter a file with --input FILE"
        throw failure
      }
    }
    let reader = try devices.openInput(input, raw: raw)
    if measuresLoudness {
      try LoudnessRate.check(file: input, rate: reader.sampleRate, option: loudnessOption)
    }
    let settings = meterSettings(
      defaultInterval: 0.1,
      channel: try ChannelChoice.index(channel, in: input, channelCount: reader.channelCount))
    let human = HumanMeterFormat()
    // A stream arrives at its own pace: show each reading as it comes.
    let isStream = InputKind.isStream(input)
    var talkSegments = TalkSegments()
    let outcome: FileMeter.Outcome
    do {
      outcome = try FileMeter.run(
        reader, settings: settings, shouldStop: { interruptRequested.load(ordering: .relaxed) }
      ) { event in
        if json {
          StandardOutput.write(JSONLines.line(for: event), flush: true)
          return
        }
        switch event {
        case .level(let reading):
          StandardOutput.write(human.line(for: reading), flush: isStream)
        case .talkStart, .talkEnd: talkSegments.take(event)
        case .summary(let summary):
          for line in human.summaryLines(summary, segments: talkSegments.closed) {
            StandardOutput.write(line)
          }
        }
      }
    } catch {
      throw CommandFailure(error)
    }
    try CommandFailure.checkDamage(
      of: input, problem: outcome.problem, invalidSamples: outcome.summary.invalidSamples,
      treatment:
        "NaN, infinite or impossibly loud (beyond +60 dBFS) samples were ignored; the levels cover the valid samples"
    )
  }
}

extension MeterBallistics: ExpressibleByArgument {}

/// Refuses loudness (`meter --loudness`, `--ballistics lufs`, `plot
/// --loudness`) on audio below `LoudnessMeter.lowestSampleRate`, in one line.
enum LoudnessRate {
  /// For `--rate`: a device's rate or a raw stream's.
  static func check(rate: Double, option: String) throws {
    guard !LoudnessMeter.measures(sampleRate: rate) else { return }
    throw ValidationError(
      "\(option) needs a sample rate of at least \(Int(LoudnessMeter.lowestSampleRate)) Hz (BS.1770 loudness is not defined below it), not --rate \(Int(rate)); raise --rate or leave out \(option)"
    )
  }

  /// For a file whose header gives `rate`.
  static func check(file: String, rate: Double, option: String) throws {
    guard !LoudnessMeter.measures(sampleRate: rate) else { return }
    throw CommandFailure(
      message:
        "\(file == "-" ? "standard input" : file): \(option) needs audio at \(Int(LoudnessMeter.lowestSampleRate)) Hz or more (BS.1770 loudness is not defined below it), it is at \(Int(rate)) Hz; resample it (for example with sox) or leave out \(option)"
    )
  }
}
