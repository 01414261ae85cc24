import Foundation
import TestSupport
import Testing

/// `micloop tones` on files written by `micloop send`, on bad input, and
/// live on the virtual microphone.
@Suite(.serialized) struct TonesCommandTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// The JSON objects `micloop tones --json` printed.
  static func events(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  static func symbols(_ events: [[String: Any]], plan: String) -> String {
    events.filter { $0["event"] as? String == "tone" && $0["plan"] as? String == plan }
      .compactMap { $0["symbol"] as? String }.joined()
  }

  static func texts(_ events: [[String: Any]]) -> [String] {
    events.filter { $0["event"] as? String == "sequence" }.compactMap { $0["text"] as? String }
  }

  /// Whether a live job's JSON `output` holds exactly these DTMF keys and these calls.
  static func heard(_ output: String, dtmf: String, texts expected: [String]) -> Bool {
    let events = Self.events(output)
    return Self.symbols(events, plan: "dtmf") == dtmf && Self.texts(events) == expected
  }

  @Test func decodesWhatSendWrote() throws {
    let cases: [(plan: String, text: String, rate: String)] = [
      ("dtmf", "123A456B789C*0#D", "8000"), ("ccir", "12335", "48000"),
      ("zvei1", "90210", "44100"), ("eia", "55555", "16000"), ("handshake", "Hi!", "48000"),
    ]
    for item in cases {
      let path = file("\(item.plan).wav")
      let send = try MicLoopBinary.run([
        "send", "--plan", item.plan, item.text, "--rate", item.rate, "-o", path,
      ])
      #expect(send.status == 0, "\(send.errorOutput)")
      let result = try MicLoopBinary.run(["tones", "--plan", item.plan, "--input", path, "--json"])
      #expect(result.status == 0, "\(result.errorOutput)")
      let events = Self.events(result.output)
      if item.plan == "dtmf" {
        #expect(Self.symbols(events, plan: "dtmf") == item.text, "\(result.output)")
      } else {
        #expect(Self.texts(events) == [item.text], "\(item.plan): \(result.output)")
      }
      #expect(events.last?["event"] as? String == "summary", "\(result.output)")
    }
  }

  @Test func humanOutputShowsTonesAndCalls() throws {
    let path = file("call.wav")
    _ = try MicLoopBinary.run(["send", "--plan", "ccir", "12335", "-o", path])
    let result = try MicLoopBinary.run(["tones", "--plan", "dtmf,ccir", "--input", path])
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("CALL \"12335\"  (sent as 123E5)"), "\(result.output)")
    #expect(result.output.contains("Decoded 5 tones and 1 sequence"), "\(result.output)")
  }

  @Test func arbitraryFrequenciesAreAPlan() throws {
    let path = file("burst.wav")
    _ = try MicLoopBinary.run(["tone", "-f", "1750", "--duration", "0.5", "-o", path])
    let result = try MicLoopBinary.run([
      "tones", "--plan", "dtmf,freq:1750,2100", "--input", path, "--json",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let tones = Self.events(result.output).filter { $0["event"] as? String == "tone" }
    #expect(tones.count == 1, "\(result.output)")
    #expect(tones.first?["plan"] as? String == "freq:1750,2100")
    #expect(tones.first?["symbol"] as? String == "1")
    let frequency = (tones.first?["frequencies"] as? [Double])?.first ?? 0
    #expect(abs(frequency - 1750) < 1, "\(frequency)")
    let duration = tones.first?["duration"] as? Double ?? 0
    #expect(abs(duration - 0.5) < 0.02, "\(duration)")
  }

  @Test func badInputGetsOneLineAndNonZeroExit() throws {
    let narrow = file("narrow.wav")
    _ = try MicLoopBinary.run(["send", "--plan", "dtmf", "1", "--rate", "8000", "-o", narrow])
    let text = file("notes.txt")
    try Data("not audio\n".utf8).write(to: URL(fileURLWithPath: text))
    let empty = file("empty.wav")
    _ = FileManager.default.createFile(atPath: empty, contents: Data())
    let nan = file("nan.wav")
    try MicLoopBinary.writeFloatWAVWithNaN(nan)
    let cases: [(arguments: [String], mentions: String, status: Int32)] = [
      (["tones", "--plan", "morse", "--input", narrow], "unknown plan 'morse'", 64),
      (["tones", "--plan", "handshake", "--input", narrow], "at least", 1),
      (["tones", "--plan", "dtmf", "--input", text], "not an audio file", 65),
      (["tones", "--plan", "dtmf", "--input", empty], "empty", 65),
      (["tones", "--plan", "dtmf", "--input", file("missing.wav")], "no such file", 1),
      (["tones", "--plan", "dtmf", "--input", nan], "NaN", 65),
      (["tones", "--plan", "dtmf", "--input", narrow, "--channel", "2"], "--channel 2", 1),
      (["tones", "--plan", "dtmf", "--input", narrow, "--tolerance", "0"], "--tolerance", 64),
      (["tones", "--input", narrow], "--plan", 64),
      (["tones", "--plan", "twotone:2000,2100", "--input", narrow], "more than 5 % apart", 64),
      (["tones", "--plan", "twotone:1000,1200:10,10", "--input", narrow], "100–60000 ms", 64),
      (
        [
          "tones", "--plan", "freq:" + (1...37).map { String(100 * $0) }.joined(separator: ","),
          "--input", narrow,
        ], "at most 35 tones, not 37", 64
      ),
      (["tones", "--plan", "dt\nmf", "--input", narrow], "unknown plan 'dt\\nmf'; use one of", 64),
      (
        [
          "tones", "--plan", (0..<65).map { "freq:\(1000 + $0)" }.joined(separator: ","),
          "--input", narrow,
        ], "at most 64 plans", 64
      ),
      (["meter", "--ballistics", "x", "--input", narrow], "ebu, vu, lufs", 64),
    ]
    for item in cases {
      let result = try MicLoopBinary.run(item.arguments)
      #expect(result.exitedNormally, "\(item.arguments) crashed")
      #expect(result.status == item.status, "\(item.arguments): \(result.status)")
      #expect(result.errorLines.count == 1, "\(item.arguments): \(result.errorOutput)")
      #expect(
        result.errorOutput.contains(item.mentions), "\(item.arguments): \(result.errorOutput)")
    }
  }

  /// Live: what `send` plays into the virtual microphone, `tones` decodes
  /// from its monitor — DTMF, a 5-tone call and Handshake text.
  @Test(.tags(.live, .pulseaudio), .needsSoundServer)
  func sentIntoTheVirtualMicrophoneIsDecodedLive() throws {
    try LiveScenarios.callsAreDecodedLive(
      in: directory, calls: [("ccir", "12335"), ("handshake", "Hi")]
    ) { try VirtualDevices() }
  }

  /// Live, as the README shows it: `tones` listens at its default period
  /// while `send` plays calls into the virtual microphone one after
  /// another, each a new stream waking the idle sink. Every key of every
  /// call is decoded (the sink's monitor delivers in bursts that once
  /// looked like a stuck stream, and restarting it lost a key or two).
  @Test(.tags(.live, .pulseaudio), .needsSoundServer)
  func everyKeyOfCallsSentOneAfterAnotherIsDecodedLive() throws {
    let devices = try VirtualDevices()
    let calls = 8
    let result = try LiveAttempts.run {
      let listener = try devices.startMicloop([
        "tones", "--plan", "dtmf", "-D", "pulse:mic.monitor", "--json",
      ])
      usleep(1_000_000)
      var senders = ""
      for _ in 0..<calls {
        let sent = try devices.micloop(["send", "--plan", "dtmf", "123#", "-D", "pulse:mic"])
        senders += sent.output + sent.errorOutput
        usleep(1_200_000)
      }
      listener.signal(SIGINT)
      let result = listener.result()
      let passed =
        Self.symbols(Self.events(result.output), plan: "dtmf")
        == String(
          repeating: "123#", count: calls)
      return (result, passed, result.output + senders)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = Self.events(result.output)
    #expect(
      Self.symbols(events, plan: "dtmf") == String(repeating: "123#", count: calls),
      "\(result.output)")
  }

  /// Live: loopback decodes while it monitors.
  @Test(.tags(.live, .pulseaudio), .needsSoundServer)
  func loopbackDecodesWhileMonitoring() throws {
    let devices = try VirtualDevices()
    let result = try LiveAttempts.run {
      let loop = try devices.startMicloop([
        "loopback", "--capture", "pulse:mic.monitor", "--playback", "pulse:spk", "--period",
        "1024", "--periods", "4", "--tones", "dtmf", "--json", "--duration", "60",
      ])
      #expect(loop.waitForOutput("\"start\""))
      let send = try devices.micloop(["send", "--plan", "dtmf", "0#*9", "-D", "pulse:mic"])
      #expect(send.status == 0, "\(send.errorOutput)")
      // Until the last key is heard, not a fixed time: on a loaded machine
      // `send` may start seconds late.
      loop.waitForOutput(timeout: 20) { Self.symbols(Self.events($0), plan: "dtmf").count >= 4 }
      loop.signal(SIGINT)
      let result = loop.result()
      let passed = Self.symbols(Self.events(result.output), plan: "dtmf") == "0#*9"
      return (result, passed, result.output)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(Self.symbols(Self.events(result.output), plan: "dtmf") == "0#*9", "\(result.output)")
  }

  /// Two pagers given on one --plan (timings after the colon belong to
  /// theirs); each page names its pager; the same page sent twice within
  /// the repeat window is one alarm.
  @Test func twoTonePagesNameTheirPager() throws {
    var parts = [String]()
    for (index, plan) in ["twotone:1000,1200", "twotone:600,1500:800,2000", "twotone:1000,1200"]
      .enumerated()
    {
      let part = file("page\(index).wav")
      let sent = try MicLoopBinary.run(["send", "--plan", plan, "AB", "-o", part])
      #expect(sent.status == 0, "\(sent.errorOutput)")
      parts.append(part)
    }
    let path = file("pages.wav")
    try MicLoopBinary.shell(["sox", "-V1", parts[0], parts[1], parts[2], path, "pad", "0.5", "0.5"])
    let result = try MicLoopBinary.run([
      "tones", "--plan", "twotone:1000,1200,twotone:600,1500:800,2000", "--input", path, "--json",
      "--repeat-window", "10",
    ])
    #expect(result.status == 0, "\(result.errorOutput)")
    let pages = Self.events(result.output).filter { $0["event"] as? String == "page" }
    #expect(
      pages.map { $0["plan"] as? String } == ["twotone:1000,1200", "twotone:600,1500:800,2000"],
      "\(result.output)")
    #expect(pages.allSatisfy { $0["group"] as? Bool == false })
  }

  /// A ZVEI call sent twice, then the fire-alarm double tone, with only
  /// `--plan siren` given: the repeat is suppressed with its tones (the call
  /// the decoder listens for on its own is held like any call's).
  @Test func aRepeatedCallBeforeASirenSignalPrintsItsTonesOnce() throws {
    let call = file("repeated-call.wav")
    let signal = file("repeated-signal.wav")
    #expect(try MicLoopBinary.run(["send", "--plan", "zvei1", "21479", "-o", call]).status == 0)
    #expect(try MicLoopBinary.run(["send", "--plan", "siren", "F", "-o", signal]).status == 0)
    // Half a second after each call: two calls back to back would be one.
    let paused = file("repeated-call-paused.wav")
    try MicLoopBinary.shell(["sox", "-V1", call, paused, "pad", "0", "0.5"])
    let path = file("repeated-alarm.wav")
    try MicLoopBinary.shell(["sox", "-V1", paused, paused, signal, path, "pad", "0.5", "0.5"])
    let result = try MicLoopBinary.run(["tones", "--plan", "siren", "--input", path, "--json"])
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = Self.events(result.output)
    #expect(Self.symbols(events, plan: "zvei1") == "21479", "\(result.output)")
    #expect(Self.texts(events) == ["21479", "fire alarm"], "\(result.output)")
  }

  /// A ZVEI call, then the fire-alarm double tone: the siren signal is
  /// reported by name with its call, in JSON and in text.
  @Test func sirenSignalsComeWithTheirCall() throws {
    let call = file("call.wav")
    let signal = file("signal.wav")
    #expect(try MicLoopBinary.run(["send", "--plan", "zvei1", "21479", "-o", call]).status == 0)
    #expect(try MicLoopBinary.run(["send", "--plan", "siren", "F", "-o", signal]).status == 0)
    let path = file("alarm.wav")
    try MicLoopBinary.shell(["sox", "-V1", call, signal, path, "pad", "0.5", "0.5"])
    let result = try MicLoopBinary.run(["tones", "--plan", "siren", "--input", path, "--json"])
    #expect(result.status == 0, "\(result.errorOutput)")
    let siren = try #require(
      Self.events(result.output).first { $0["plan"] as? String == "siren" }, "\(result.output)")
    #expect(siren["event"] as? String == "sequence")
    #expect(siren["text"] as? String == "fire alarm")
    #expect(siren["symbols"] as? String == "F")
    #expect(siren["call"] as? String == "21479")
    let text = try MicLoopBinary.run(["tones", "--plan", "siren", "--input", path])
    #expect(text.output.contains("SIGNAL \"fire alarm\" after call \"21479\""), "\(text.output)")
  }
}
