import Foundation
import TestSupport
import Testing

/// The live tests on micloop's native PipeWire node (`-D pw…`) on a private
/// PipeWire server with its null sinks `mic` and `spk`: `pw:mic` plays
/// into the microphone sink, and captures from its monitor.
@Suite(
  .serialized, .tags(.live, .pipewire), .needsSoundServer
) struct PipeWireNativeTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  /// A loop between the native nodes passes the tone at its gain. About
  /// one start in seven on this machine leaves the speaker silent for the
  /// whole ten seconds although the loop and the tone both run (a link the
  /// private server never makes?): the test says so and starts the loop
  /// once more, and fails if the second loop is silent too.
  @Test func aToneLoopedThroughTheNativeNodeComesOutAtItsGain() throws {
    let server = try PipeWireServer()
    for attempt in 1...2 {
      // Each attempt starts the tone and the loop afresh: a silent speaker
      // has been a tone whose node never played into the microphone.
      let tone = try server.startMicloop([
        "tone", "-f", "1000", "--level-db", "-10", "--duration", "60", "-D", "pw:mic",
      ])
      defer { tone.signal(SIGKILL) }
      #expect(tone.waitForOutput("Playing"))
      let loop = try server.startMicloop([
        "loopback", "--capture", "pw:mic", "--playback", "pw:spk", "--gain-db", "-6",
        "--duration", "60", "--json",
      ])
      defer { loop.signal(SIGKILL) }
      #expect(loop.waitForOutput("\"start\""))
      // A loaded machine may take seconds to link the nodes and start the
      // tone: the summary's peak is the loudest moment of the ten.
      let result = try server.startMicloop([
        "meter", "-D", "pw:spk", "--duration", "10", "--json",
      ]).result()
      #expect(result.status == 0, "\(result.errorOutput)")
      if let peak = result.lastJSONObject?["peak_dbfs"] as? Double {
        #expect(abs(peak - -16) < 0.05, "peak \(peak) dBFS")
        return
      }
      // Silence on the speaker: the graph's links, and what the loop said.
      let graph =
        (try? SpawnedProcess(["pw-link", "-l"], environment: server.environment))?
        .result().output ?? ""
      loop.signal(SIGINT)
      let looped = loop.result()
      let said =
        "the speaker was silent (attempt \(attempt)); loopback: \(looped.output) \(looped.errorOutput); links: \(graph)"
      if attempt == 2 { Issue.record(Comment(rawValue: said)) } else { print(said) }
    }
  }

  /// `jack_iodelay` on PipeWire's JACK layer, wired through micloop's
  /// node: exactly one quantum, the graph's own feedback edge.
  @Test(arguments: [64, 32])
  func aLoopThroughTheNativeNodeIsOneQuantum(quantum: Int) throws {
    let server = try PipeWireServer()
    let loop = try server.startMicloop([
      "loopback", "-D", "pw:none", "--period", "\(quantum)", "--duration", "60",
    ])
    defer { loop.signal(SIGKILL) }
    #expect(loop.waitForOutput("Hz, capture"))
    var environment = server.environment
    environment["PIPEWIRE_QUANTUM"] = "\(quantum)/48000"
    let meter = try SpawnedProcess(
      ["pw-jack", "stdbuf", "-o0", "jack_iodelay"], environment: environment)
    defer { meter.signal(SIGKILL) }
    for (output, input) in [
      ("jack_delay:out", "micloop:capture_1"), ("micloop:playback_1", "jack_delay:in"),
    ] {
      var linked = false
      for _ in 0..<50 where !linked {
        linked =
          try VirtualDevices.wait(for: ["pw-link", output, input], environment: environment) == 0
        if !linked { usleep(100_000) }
      }
      #expect(linked, "pw-link \(output) \(input)")
    }
    usleep(2_500_000)
    meter.signal(SIGTERM)
    let readings = JackNativeTests.readings(meter.result().output).dropFirst(2).sorted()
    loop.signal(SIGINT)
    #expect(loop.result().status == 0)
    let median = try #require(readings.isEmpty ? nil : readings[readings.count / 2])
    #expect(abs(median - Double(quantum)) < 0.1, "\(readings)")
  }

  /// `micloop latency` reports the latency the graph sets on its ports:
  /// playing into a sink on ALSA's null device that says one quantum plus
  /// 480 frames, capturing the `mic` sink's monitor, into which that sink's
  /// monitor (the loop) and a source that says one quantum plus 240 frames
  /// are linked. The values are what `pw-dump` shows on the ports linked to
  /// micloop's, at the quantum the graph ran.
  @Test func latencyReportsTheGraphsPortLatencies() throws {
    let server = try PipeWireServer()
    try server.addALSANullNode("hwspk", isSink: true, internalLatency: 480)
    try server.addALSANullNode("hwmic", isSink: false, internalLatency: 240)
    try server.link("hwspk:monitor_MONO", "mic:playback_MONO")
    try server.link("hwmic:capture_MONO", "mic:playback_MONO")
    let result = try server.startMicloop([
      "latency", "--capture", "pw:mic", "--playback", "pw:hwspk", "--period", "256", "--json",
    ]).result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let json = try #require(result.lastJSONObject, "\(result.output)")
    let quantum = try #require(json["period_frames"] as? Int)
    let capture = try #require(json["server_capture_frames"] as? Int, "\(result.output)")
    let playback = try #require(json["server_playback_frames"] as? Int, "\(result.output)")
    let expectedCapture = try #require(
      try server.portLatency("mic:monitor_0", direction: "Output", quantum: quantum))
    let expectedPlayback = try #require(
      try server.portLatency("hwspk:playback_0", direction: "Input", quantum: quantum))
    #expect(expectedCapture == quantum + 240, "the graph says \(expectedCapture) frames")
    #expect(expectedPlayback == quantum + 480, "the graph says \(expectedPlayback) frames")
    #expect(capture == expectedCapture, "\(result.output)")
    #expect(playback == expectedPlayback, "\(result.output)")
    #expect(json["server_round_trip_frames"] as? Int == capture + playback)
  }

  /// micloop stopped for 50 ms: the graph's clock ran on without it, and it
  /// reports one loss of that length.
  /// At 256 frames a cycle: at 64 a busy machine loses cycles of its own
  /// (real losses, reported too) longer than the four quanta that tell
  /// the stall apart.
  @Test func aStallIsReportedAsOneLossOfItsLength() throws {
    let server = try PipeWireServer()
    let loop = try server.startMicloop([
      "loopback", "-D", "pw:none", "--period", "256", "--json", "--duration", "60",
    ])
    defer { loop.signal(SIGKILL) }
    let (result, stopped) = NativeLoss.stallOnce(loop)
    #expect(result.status == 0, "\(result.errorOutput)")
    NativeLoss.expectOneLoss(in: result.output, lasting: stopped, quantum: 256)
  }

  /// Every sample played into the microphone sink is in the recording. A
  /// loss the server causes is one micloop now reports itself (an xrun
  /// with its frames), so no second recorder is needed to tell it.
  @Test func aRecordingHoldsEverySamplePlayed() throws {
    let server = try PipeWireServer()
    let noise = directory.appendingPathComponent("noise.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", noise, "synth", "3",
      "whitenoise", "vol", "0.3", "pad", "0.5", "0",
    ])
    let recording = directory.appendingPathComponent("recording.wav").path
    try RecordingComparison.expectExact(played: noise, recording: recording) {
      let loop = try server.startMicloop([
        "loopback", "--capture", "pw:mic", "--playback", "pw:spk", "--period", "1024",
        "--record", recording, "--duration", "7",
      ])
      defer { loop.signal(SIGKILL) }
      #expect(loop.waitForOutput("Hz, capture"))
      let player = try SpawnedProcess(
        VirtualDevices.realTime + ["aplay", "-q", "-D", "pipewire:NODE=mic", noise],
        environment: server.environment
      ).result()
      #expect(player.status == 0, "aplay exited with \(player.status)")
      var result = loop.result()
      result.errorOutput += player.errorOutput
      return result
    }
  }

  @Test func tonesSentToTheNativeNodeAreDecodedLive() throws {
    let server = try PipeWireServer()
    // In whole-suite runs the tones have been missing once with no loss
    // reported (as the native loop test's silent tone node): the second
    // attempt must hear them, and the first one's links are printed.
    let result = try LiveAttempts.runAgainAfterAnyShortfall {
      let started = Date()
      let tones = try server.startMicloop([
        "tones", "--plan", "dtmf,ccir", "-D", "pw:mic", "--json", "--duration", "30",
      ])
      defer { tones.signal(SIGKILL) }
      #expect(tones.waitForOutput("\"start\""))
      var sent = ""
      for (plan, text) in [("dtmf", "0#*9"), ("ccir", "12335")] {
        let send = try server.startMicloop(["send", "--plan", plan, text, "-D", "pw:mic"])
        let status = send.wait()
        #expect(status == 0, "\(send.result().errorOutput)")
        sent += " \(plan) sent by \(Date().timeIntervalSince(started)) s;"
      }
      usleep(500_000)
      let graph =
        (try? SpawnedProcess(["pw-link", "-l"], environment: server.environment))?
        .result().output ?? ""
      tones.signal(SIGINT)
      let result = tones.result()
      let passed = TonesCommandTests.heard(result.output, dtmf: "0#*9", texts: ["12335"])
      let seen =
        "\(sent) stopped at \(Date().timeIntervalSince(started)) s; tones: \(result.output) \(result.errorOutput); links: \(graph)"
      return (result, passed, seen)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = TonesCommandTests.events(result.output)
    #expect(TonesCommandTests.symbols(events, plan: "dtmf") == "0#*9", "\(result.output)")
    #expect(TonesCommandTests.texts(events) == ["12335"], "\(result.output)")
  }

  @Test func devicesListsTheServersNodes() throws {
    let server = try PipeWireServer()
    let result = try server.startMicloop(["devices", "--json"]).result()
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("\"name\":\"pw:mic\""), "\(result.output)")
    #expect(result.output.contains("\"name\":\"pw:spk\""), "\(result.output)")
  }
}
