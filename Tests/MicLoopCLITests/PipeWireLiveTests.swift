import Foundation
import TestSupport
import Testing

/// The live tests on PipeWire: micloop's ALSA devices through the
/// `pipewire` plugin on a private server with two null sinks.
@Suite(
  .serialized, .tags(.live, .pipewire), .needsSoundServer
) struct PipeWireLiveTests {
  func peak(_ result: MicLoopBinary.Result) throws -> Double {
    try #require(result.lastJSONObject?["peak_dbfs"] as? Double, "\(result.output)")
  }

  /// A 1 kHz tone at −10 dBFS played into the "mic" sink for 30 s.
  func playTone(_ server: PipeWireServer) throws -> SpawnedProcess {
    try server.startMicloop([
      "tone", "-f", "1000", "--level-db", "-10", "--duration", "30", "-D", "pipewire:NODE=mic",
    ])
  }

  @Test func aTonePlayedIntoTheMicrophoneIsMeteredAtItsLevel() throws {
    try LiveScenarios.toneIsMeteredAtItsLevel(in: try MicLoopBinary.temporaryDirectory()) {
      try PipeWireServer()
    }
  }

  @Test func loopbackOnPipeWirePassesTheMicrophoneAtItsGain() throws {
    let server = try PipeWireServer()
    let tone = try playTone(server)
    defer { tone.signal(SIGKILL) }
    let loop = try server.startMicloop(
      [
        "loopback", "--capture", "pipewire:NODE=mic", "--playback", "pipewire:NODE=spk",
        "--gain-db", "-6", "--period", "1024", "--periods", "4", "--duration", "30",
      ], capturesMonitor: true)
    defer { loop.signal(SIGKILL) }
    #expect(loop.waitForOutput("Hz, capture"))
    let meter = try server.startMicloop(
      ["meter", "-D", "pipewire:NODE=spk", "--duration", "3", "--json"], capturesMonitor: true)
    let result = meter.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let level = try peak(result)
    #expect(abs(level - -16) < 0.05, "peak \(level) dBFS")
    loop.signal(SIGINT)
    let looped = loop.result()
    #expect(looped.status == 0, "\(looped.errorOutput)")
  }
}

/// Recording, live decoding and latency on PipeWire.
@Suite(
  .serialized, .tags(.live, .pipewire), .needsSoundServer
) struct PipeWireCaptureTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  @Test func recordingMatchesWhatWasPlayedSampleForSample() throws {
    let server = try PipeWireServer()
    let noise = directory.appendingPathComponent("noise.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", noise, "synth", "3",
      "whitenoise", "vol", "0.3", "pad", "0.5", "0",
    ])
    let recording = directory.appendingPathComponent("recording.wav").path
    let reference = directory.appendingPathComponent("reference.wav").path
    try RecordingComparison.expectExact(played: noise, recording: recording, reference: reference) {
      let loop = try server.startMicloop(
        [
          "loopback", "--capture", "pipewire:NODE=mic", "--playback", "pipewire:NODE=spk",
          "--period", "1024", "--periods", "4", "--record", recording, "--duration", "7",
        ], capturesMonitor: true)
      defer { loop.signal(SIGKILL) }
      #expect(loop.waitForOutput("Hz, capture"))
      // A second recorder on the same monitor: on a loaded machine the
      // server can lose audio on its way to its capture clients (a quantum
      // of zeros, data lost, no xrun anywhere); when the reference lost
      // some too, that is the server's (see `RecordingComparison`).
      let referee = try SpawnedProcess(
        VirtualDevices.realTime + [
          "arecord", "-q", "-D", "pipewire:NODE=mic", "-r", "48000", "-f", "FLOAT_LE", "-c", "1",
          "-d", "7", reference,
        ], environment: server.captureEnvironment)
      // The player's own buffering: asked for a second, the PipeWire
      // plugin once gave back a recording that matched nowhere, 0 xruns
      // reported (see Docs/TESTING.md).
      let player = try SpawnedProcess(
        VirtualDevices.realTime + ["aplay", "-q", "-D", "pipewire:NODE=mic", noise],
        environment: server.environment
      ).result()
      #expect(player.status == 0, "aplay exited with \(player.status)")
      var result = loop.result()
      let heard = referee.result()
      result.errorOutput += player.errorOutput + heard.errorOutput
      return result
    }
  }

  @Test func callsAreDecodedLive() throws {
    try LiveScenarios.callsAreDecodedLive(in: directory) { try PipeWireServer() }
  }

  /// The round trip through a sink and its monitor: at least micloop's
  /// capture period, at most its buffering plus two of the graph's quanta.
  @Test func latencyIsConsistentWithTheBuffering() throws {
    let server = try PipeWireServer()
    let result = try server.startMicloop(
      [
        "latency", "--playback", "pipewire:NODE=spk", "--capture", "pipewire:NODE=spk",
        "--period", "256", "--periods", "2", "--json",
      ], capturesMonitor: true
    ).result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let roundTrip = try #require(result.lastJSONObject?["round_trip_frames"] as? Int)
    let buffering = try #require(result.lastJSONObject?["unit_buffer_frames"] as? Int)
    #expect(buffering == 3 * 256)
    #expect(
      roundTrip >= 256 && roundTrip <= buffering + 2 * 1024, "round trip \(roundTrip) frames")
  }
}
