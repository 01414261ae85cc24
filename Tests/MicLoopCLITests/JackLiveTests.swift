import Foundation
import TestSupport
import Testing

/// The live tests on JACK: micloop's ALSA devices through the `jack` plugin
/// on a private `jackd -d dummy`, loops closed with `jack_connect`. Each
/// suite is serialized and names its servers alone (JACK's registry holds
/// few names), so no two servers of one name ever run at once.
@Suite(
  .serialized, .tags(.live, .jack), .needsSoundServer)
struct JackLiveTests {
  /// Lets `meter` read 2 s more once sound reaches it (connecting ports
  /// takes a loaded machine seconds), then stops it for its summary.
  static func meterOnceSoundArrives(_ meter: SpawnedProcess) -> MicLoopBinary.Result {
    meter.waitForOutput(timeout: 30) { $0.contains("\"peak_dbfs\":-") }
    usleep(2_000_000)
    meter.signal(SIGINT)
    return meter.result()
  }

  /// Runs `attempt` on a new server, once more on another when it fell
  /// short and the server reported a stuck client (`LiveAttempts`). Returns
  /// the meter's result and the server's log.
  static func onServer(
    _ attempt: (JackServer) throws -> (meter: MicLoopBinary.Result, passed: Bool)
  ) throws -> (meter: MicLoopBinary.Result, log: String) {
    try LiveAttempts.run {
      let jack = try JackServer()
      let (meter, passed) = try attempt(jack)
      let log = jack.log
      return ((meter, log), passed, meter.output + log)
    }
  }

  /// Whether `result` is a meter that ended well with the peak `expected`.
  static func peakIs(_ expected: Double, _ result: MicLoopBinary.Result) -> Bool {
    guard result.status == 0, let peak = result.lastJSONObject?["peak_dbfs"] as? Double else {
      return false
    }
    return abs(peak - expected) < 0.05
  }

  @Test func aTonePlayedIntoTheMicrophoneIsMeteredAtItsLevel() throws {
    try LiveScenarios.toneIsMeteredAtItsLevel(in: try MicLoopBinary.temporaryDirectory()) {
      try JackServer()
    }
  }

  @Test func loopbackOnJackPassesTheMicrophoneAtItsGain() throws {
    var looped: MicLoopBinary.Result?
    let (result, log) = try Self.onServer { jack in
      let meter = try jack.startMicloop(["meter", "-D", "jackin", "--duration", "60", "--json"])
      defer { meter.signal(SIGKILL) }
      let loop = try jack.startMicloop([
        "loopback", "-D", "jackthrough", "--gain-db", "-6", "--period", "1024", "--periods", "4",
        "--duration", "30",
      ])
      defer { loop.signal(SIGKILL) }
      let tone = try jack.startMicloop([
        "tone", "-f", "1000", "--level-db", "-10", "--duration", "30", "-D", "jackout",
      ])
      defer { tone.signal(SIGKILL) }
      #expect(try jack.connect(from: tone, to: loop))
      #expect(try jack.connect(from: loop, to: meter))
      let result = Self.meterOnceSoundArrives(meter)
      loop.signal(SIGINT)
      looped = loop.result()
      return (result, Self.peakIs(-16, result))
    }
    #expect(result.status == 0, "\(result.errorOutput)\njackd: \(log)")
    let peak = try #require(result.lastJSONObject?["peak_dbfs"] as? Double, "\(result.output)")
    #expect(abs(peak - -16) < 0.05, "peak \(peak) dBFS")
    // What comes out is checked, not how little buffering does it: the
    // lowest clean period is measured by `make bench` (Docs/TESTING.md).
    let loopback = try #require(looped)
    #expect(loopback.status == 0, "\(loopback.errorOutput)")
    #expect(loopback.output.contains("Ran "), "\(loopback.output)")
  }
}

/// Recording and live decoding on JACK, on servers of another name
/// than `JackLiveTests`' so that the two suites may run side by side.
@Suite(
  .serialized, .tags(.live, .jack), .needsSoundServer)
struct JackCaptureTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  static let serverName = "micloop-capture"

  /// A 48 kHz 16-bit mono test file from sox, 1.5 s of silence first so a
  /// player's port can be connected before the sound starts.
  func signal(_ name: String, _ synth: [String]) throws -> String {
    let path = directory.appendingPathComponent(name).path
    try MicLoopBinary.shell(
      ["sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", path] + synth + [
        "pad", "1.5", "0",
      ])
    return path
  }

  @Test func recordingMatchesWhatWasPlayedSampleForSample() throws {
    let jack = try JackServer(name: Self.serverName)
    let noise = try signal("noise.wav", ["synth", "3", "whitenoise", "vol", "0.3"])
    let recording = directory.appendingPathComponent("recording.wav").path
    try RecordingComparison.expectExact(played: noise, recording: recording) {
      let loop = try jack.startMicloop([
        "loopback", "-D", "jackthrough", "--period", "256", "--periods", "2", "--record",
        recording, "--duration", "7",
      ])
      defer { loop.signal(SIGKILL) }
      #expect(loop.waitForOutput("Hz, capture"))
      let player = try jack.play(noise)
      #expect(try jack.connect(from: player, program: "aplay", to: loop))
      var result = loop.result()
      jack.finish(player, into: &result)
      return result
    }
  }

  @Test func callsAreDecodedLive() throws {
    try LiveScenarios.callsAreDecodedLive(in: directory) { try JackServer(name: Self.serverName) }
  }
}
