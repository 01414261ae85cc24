import ArgumentParser
import AudioFiles
import Console
import DuplexIO
import Recording
import TextFormatting
import ToneDecoding
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop record`: one file per transmission, voice-, level- or
/// tone-activated, from a capture device or a file.
struct Record: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "record",
    abstract: "Record one file per transmission, started by talk, a level or a tone call.",
    discussion: """
      Files start --pre-roll before the first sound and end --hang after the last; \
      transmissions shorter than --min make no file (a blip). Files are RF64/WAV \
      with a bext chunk (the first sample's time), written as NAME.part.wav and \
      renamed when closed, each with a JSON sidecar; the session's index \
      (session-TIME.jsonl in --dir) accounts for every frame: recording, idle, \
      blip and gap spans, xruns and decoded tones. --json prints the same lines.
      """)

  @Option(
    name: [.short, .long],
    help:
      "Audio file to split into transmissions (WAV, FLAC …; - reads standard input), sample-exact; without it, record live."
  )
  var input: String?
  @Flag(
    help:
      "The input is headerless little-endian PCM: give --rate; --channels and --format default to 1 and s16."
  )
  var raw = false
  @Option(
    name: .customLong("input-start"),
    help:
      "With --input: the UTC time of the file's first sample (2026-11-25T12:00:00.000Z); default: its modification time less its length."
  )
  var inputStart: String?
  @OptionGroup(title: "Devices (without --input: record live from the capture device)")
  var devices: CaptureDeviceOptions
  @Option(parsing: .unconditional, help: "Live: stop after this long (e.g. 600, 600s, 1500ms).")
  var duration: Seconds?
  @Option(
    name: [.customLong("dir"), .customLong("directory"), .customLong("out")],
    help: "Directory for recordings, sidecars and the session index (made when missing).")
  var directory: String
  @Option(
    help: ArgumentHelp(
      "What keeps a recording going: talk (the talk detector) or level:DBFS (a 10 ms level at or above DBFS, 6 dB hysteresis; for carriers and squelched audio).",
      valueName: "talk|level:DBFS"))
  var trigger = TriggerChoice(argument: "talk")!
  @Option(
    name: .customLong("start-on"),
    help: ArgumentHelp(
      "Only a call starts a recording (which then starts before its first tone): PLAN[:SEQUENCE], e.g. dtmf:*1#, zvei1:12345, ccir, twotone:1000,1200. Repeat for several.",
      valueName: "plan[:sequence]"))
  var startOn: [String] = []
  @Option(
    parsing: .unconditional,
    help: "Count the trigger only while this CTCSS sub-tone (Hz, e.g. 88.5) is present.")
  var ctcss: Double?
  @Option(
    help: ArgumentHelp(
      "Also decode these plans to tag recordings (comma-separated, as tones --plan).",
      valueName: "plans"))
  var tags: String?
  @Option(
    name: .customLong("pre-roll"), parsing: .unconditional,
    help: "Audio kept before the first sound.")
  var preRoll = Seconds(0.3)
  @Option(parsing: .unconditional, help: "Quiet after which a file ends (its tail is kept).")
  var hang = Seconds(1.5)
  @Option(
    name: .customLong("min"), parsing: .unconditional,
    help: "Shortest transmission that makes a file; shorter ones are logged as blips.")
  var minimum = Seconds(0.3)
  @Option(
    name: .customLong("max"), parsing: .unconditional,
    help: "Split a file this long at the next pause (sample-continuous; at 1.1 × this without one)."
  )
  var maximum = Seconds(1800)
  @Option(
    name: .customLong("call-hang"), parsing: .unconditional,
    help: "With --start-on: how long a recording stays open after the call for the announcement.")
  var callHang = Seconds(5)
  @Option(
    name: .customLong("name"),
    help: ArgumentHelp(
      "File name template: %Y %m %d %H %M %S %f (ms) %j %z (Z or +hhmm) %L (label) %T (trigger) %n (count) %%; / makes subdirectories.",
      valueName: "template"))
  var nameTemplate = FileNaming.defaultTemplate
  @Flag(name: .customLong("local-time"), help: "Name files by local time instead of UTC.")
  var localTime = false
  @Option(help: "A word added to file names (%L, or _LABEL at the end).")
  var label: String?
  @Option(
    name: .customLong("file-type"),
    help:
      "wav (RF64/WAV, valid at every moment) or flac (smaller; after a crash its header says 0 s and the last frame is lost)."
  )
  var fileType = RecordingContainer.wav
  @Option(
    help:
      "Sample encoding of the files: s16, s24, s32 or float (default: the input file's, or s16 live)."
  )
  var encoding: AudioFileEncoding?
  @Option(
    name: .customLong("keep-days"), parsing: .unconditional,
    help: "Delete closed recordings older than this many days.")
  var keepDays: Double?
  @Option(
    name: .customLong("max-bytes"), parsing: .unconditional,
    help:
      "Keep recordings and indexes in --dir under this size (e.g. 30M, 2G), deleting the oldest.")
  var maxBytes: ByteCount?
  @Option(
    name: .customLong("min-free"), parsing: .unconditional,
    help: "Keep this much free on the disk (e.g. 1G), deleting the oldest recordings.")
  var minFree: ByteCount?
  @Option(
    name: .customLong("sync"), parsing: .unconditional,
    help: "Force the open file and the index to disk this often.")
  var sync = Seconds(2)
  @Option(
    name: .customLong("on-close"),
    help: ArgumentHelp(
      "Run this shell command for each closed file: $1 the file, $2 its sidecar, MICLOOP_* variables, the index line on standard input; never waited for.",
      valueName: "command"))
  var onClose: String?
  @Option(
    name: .customLong("on-close-timeout"), parsing: .unconditional,
    help: "Stop an --on-close command after this long.")
  var onCloseTimeout = Seconds(300)
  @Flag(help: "Print the index's JSON Lines instead of text.")
  var json = false
  @OptionGroup(title: "Talk detection") var talk: TalkOptions
  @OptionGroup(title: "Tone decisions") var toneDecisions: ToneDecisionOptions
  @OptionGroup(title: "Monitoring station (live)") var station: StationOptions

  func validate() throws {
    try devices.validate(input: input, raw: raw)
    if input != nil && station.http != nil {
      throw ValidationError(
        "--http serves a live recording; leave out --input to record the device")
    }
    if input != nil && (duration != nil || devices.reconnect) {
      throw ValidationError(
        "--duration and --reconnect are for live recording; with --input the file sets the length")
    }
    try duration?.require("--duration", atLeast: 0.001)
    guard !directory.isEmpty else { throw ValidationError("--dir needs a directory") }
    try preRoll.require("--pre-roll", atLeast: 0, atMost: 10)
    try hang.require("--hang", atLeast: 0.01, atMost: 60)
    try minimum.require("--min", atLeast: 0, atMost: 60)
    try maximum.require("--max", atLeast: 1, atMost: 86_400)
    if minimum.value > maximum.value {
      throw ValidationError(
        "--min \(minimum.value) s is longer than --max \(maximum.value) s: every transmission would be a blip; give --min at most --max"
      )
    }
    try callHang.require("--call-hang", atLeast: 0, atMost: 60)
    try sync.require("--sync", atLeast: 0.1, atMost: 3_600)
    try onCloseTimeout.require("--on-close-timeout", atLeast: 0.1, atMost: 86_400)
    for text in startOn {
      do { _ = try ToneStart(parsing: text) } catch {
        throw ValidationError("--start-on: \(error.commandLineMessage)")
      }
    }
    if let ctcss {
      guard
        case .subAudible(let table) = TonePlan.ctcss.kind,
        table.contains(where: { abs($0 - ctcss) <= 0.5 })
      else {
        throw ValidationError(
          "--ctcss \(ctcss) is not a standard CTCSS tone; use one of 67.0 … 254.1 Hz, for example 88.5"
        )
      }
    }
    if let tags { _ = try TonePlanList.parse(tags) }
    if let keepDays, !(keepDays > 0 && keepDays <= 36_500) {
      throw ValidationError("--keep-days must be above 0 and at most 36500, for example 42")
    }
    if let maxBytes, maxBytes.value < 1 << 20 {
      throw ValidationError("--max-bytes must be at least 1M, for example 30M or 2G")
    }
    if let minFree, minFree.value < 0 {
      throw ValidationError("--min-free must be 0 or more, for example 1G")
    }
    if inputStart != nil && input == nil {
      throw ValidationError("--input-start places a file's first sample; add --input FILE")
    }
    if let inputStart, Self.parseUTC(inputStart) == nil {
      throw ValidationError(
        "--input-start '\(inputStart)' is not a UTC time; write 2026-11-25T12:00:00.000Z")
    }
    if onClose.map({ $0.allSatisfy { $0 == " " || $0 == "\t" } }) == true {
      throw ValidationError("--on-close needs a command, for example --on-close 'gzip -k \"$1\"'")
    }
    if fileType == .flac, encoding == .float {
      throw ValidationError("FLAC holds integers; use --encoding s16 or s24 with --file-type flac")
    }
    if let label, label.isEmpty || label.contains("/") {
      throw ValidationError("--label is one word without /, for example north")
    }
    do { try naming.check() } catch { throw ValidationError("--name: \(error)") }
  }

  private var naming: FileNaming {
    FileNaming(template: nameTemplate, usesLocalTime: localTime, label: label)
  }

  /// The recorder's settings from the options.
  func settings() throws -> RecorderSettings {
    var settings = RecorderSettings()
    settings.trigger = trigger.trigger
    settings.startOn = try startOn.map { try ToneStart(parsing: $0) }
    settings.subTone = ctcss
    settings.tagPlans = try tags.map { try TonePlanList.parse($0) } ?? []
    settings.preRoll = preRoll.value
    settings.hang = hang.value
    settings.minimum = minimum.value
    settings.maximum = maximum.value
    settings.callHang = callHang.value
    settings.meter.talk = talk.settings
    settings.syncInterval = sync.value
    settings.container = fileType
    settings.encoding = encoding
    settings.naming = naming
    settings.retention = RetentionPolicy(
      maximumAge: keepDays.map { $0 * 86_400 }, maximumBytes: maxBytes?.value,
      minimumFree: minFree?.value)
    return settings
  }

  func run() throws {
    let settings = try settings()
    let printer = RecordPrinter(json: json, usesLocalTime: localTime)
    let hook = onClose.map { CloseHook(command: $0, timeout: onCloseTimeout.value) }
    guard let input else {
      try RecordRunner.run(
        configuration: devices.configuration(.capture), settings: settings,
        toneSettings: toneDecisions.settings, directory: directory, duration: duration?.value,
        printer: printer, hook: hook, recovery: devices.recovery, station: station)
      return
    }
    let reader = try devices.openInput(input, raw: raw)
    let decoder = try makeDecoder(settings, sampleRate: reader.sampleRate, isFile: true)
    let start =
      inputStart.flatMap(Self.parseUTC)
      ?? Self.fileStart(path: input, frames: reader.declaredFrameCount, rate: reader.sampleRate)
    let clock = StreamClock(sampleRate: reader.sampleRate, startingAt: start)
    printer.attach(sampleRate: reader.sampleRate, clock: clock)
    let recorder: Recorder
    do {
      recorder = try Recorder(
        settings: settings, sampleRate: reader.sampleRate, channelCount: reader.channelCount,
        encoding: settings.encoding ?? reader.fileEncoding, directory: directory, clock: clock,
        source: input == "-" ? "standard input" : input
      ) { event in
        printer.show(event)
        if case .recording(let file) = event { hook?.run(file, recorderClock: clock) }
      }
    } catch {
      let isData = if case .unsupportedRate = error { true } else { false }
      throw CommandFailure(
        message: (isData ? input + ": " : "") + error.commandLineMessage, status: isData ? 65 : 1)
    }
    let outcome: FileRecording.Outcome
    do {
      outcome = try FileRecording.run(
        reader, recorder: recorder, decoder: decoder,
        shouldStop: {
          hook?.poll()
          return interruptRequested.load(ordering: .relaxed)
        })
    } catch {
      recorder.finish()
      throw CommandFailure(error)
    }
    StandardOutput.flush()
    hook?.finish()
    try CommandFailure.checkDamage(
      of: input, problem: outcome.problem, invalidSamples: outcome.invalidSamples,
      treatment:
        "NaN, infinite or impossibly loud (beyond +60 dBFS) samples were recorded as silence")
    try Self.checkNothingLost(recorder)
  }

  /// Fails (status 1) a session that lost transmissions for lack of
  /// room. The recorder said so in one line when it happened (with the
  /// fix), the summary counts the gaps and the index holds each: nothing
  /// more is printed.
  static func checkNothingLost(_ recorder: Recorder) throws {
    guard recorder.framesLostToDisk > 0 else { return }
    throw CommandFailure.alreadyReported
  }

  /// The decoder for the plans the settings need, if any.
  func makeDecoder(_ settings: RecorderSettings, sampleRate: Double, isFile: Bool) throws
    -> ToneDecoder?
  {
    let plans = settings.decodedPlans
    guard !plans.isEmpty else { return nil }
    do {
      return try ToneDecoder(plans: plans, sampleRate: sampleRate, settings: toneDecisions.settings)
    } catch {
      throw CommandFailure(message: error.commandLineMessage(isFile: isFile))
    }
  }

  /// Seconds since 1970 of `text` (`2026-11-25T12:00:00Z`, with optional
  /// milliseconds), or `nil`.
  static func parseUTC(_ text: String) -> Double? {
    var body = Substring(text)
    guard body.hasSuffix("Z") || body.hasSuffix("z") else { return nil }
    body = body.dropLast()
    let parts = body.split(whereSeparator: { "-T:t".contains($0) })
    guard parts.count == 6, let year = Int(parts[0]), let month = Int(parts[1]),
      let day = Int(parts[2]), let hour = Int(parts[3]), let minute = Int(parts[4]),
      let second = Double(parts[5]), (1...12).contains(month), (1...31).contains(day),
      (0...23).contains(hour), (0...59).contains(minute), second >= 0, second < 61
    else { return nil }
    var fields = tm()
    fields.tm_year = Int32(year - 1900)
    fields.tm_mon = Int32(month - 1)
    fields.tm_mday = Int32(day)
    fields.tm_hour = Int32(hour)
    fields.tm_min = Int32(minute)
    fields.tm_sec = 0
    let seconds = timegm(&fields)
    // timegm carries 30 February into March: a day the month lacks is refused.
    var back = tm()
    var time = seconds
    guard gmtime_r(&time, &back) != nil, back.tm_mday == Int32(day), back.tm_mon == Int32(month - 1)
    else { return nil }
    return Double(seconds) + second
  }

  /// When a file's first sample was, as far as the file system tells:
  /// its modification time less its length (now for a stream).
  static func fileStart(path: String, frames: Int64?, rate: Double) -> Double {
    var status = stat()
    guard path != "-", stat(path, &status) == 0, let frames else { return SystemClock.now }
    let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
    return modified - Double(frames) / rate
  }
}

/// Runs `--on-close` for each closed recording (`HookRunner`). Control thread.
final class CloseHook {
  private let runner: HookRunner

  init(command: String, timeout: Double) {
    runner = HookRunner(command: command, option: "--on-close", timeout: timeout)
  }

  func run(_ file: RecordedFile, recorderClock clock: StreamClock) {
    let directory = String(file.path.dropLast(file.name.count))
    let sidecar = directory + file.sidecarName
    let rate = clock.sampleRate
    let line = RecorderEvent.recording(file).json(sampleRate: rate, clock: clock)
    runner.run(
      HookRunner.Run(
        label: file.name,
        variables: [
          "MICLOOP_EVENT=recording", "MICLOOP_FILE=\(file.path)", "MICLOOP_SIDECAR=\(sidecar)",
          "MICLOOP_START=\(WallClockTime(epochSeconds: file.start).iso8601)",
          "MICLOOP_START_FRAME=\(file.startFrame)", "MICLOOP_FRAMES=\(file.frames)",
          "MICLOOP_DURATION=\(DecimalFormatting.fixed(Double(file.frames) / rate, places: 3))",
          "MICLOOP_TRIGGER=\(file.trigger)", "MICLOOP_PART=\(file.part)",
          "MICLOOP_TAGS=\(file.tags.map(\.summary).joined(separator: ";"))",
        ], input: line, arguments: [file.path, sidecar]))
  }

  func poll() { runner.poll() }
  func finish() { runner.finish() }
  var pending: Int { runner.pending }
}
