import AudioFiles
import Foundation
import TestSupport
import Testing

/// The live tests on micloop's native JACK client (`-D jack…`), each on a
/// private `jackd -d dummy` of this test run's own name. micloop's clients
/// are named in the order they start (micloop, micloop-01, …), so each
/// test starts them one after the other and lets `jack:PATTERN` names
/// connect them.
@Suite(
  .serialized, .tags(.live, .jack), .needsSoundServer)
struct JackNativeTests {
  private let scratch: ScratchDirectory
  var directory: URL { scratch.url }

  init() throws { scratch = try ScratchDirectory("cli") }

  static func server(periodFrames: Int) throws -> JackServer {
    try JackServer(periodFrames: periodFrames, name: JackServer.uniqueName("native"))
  }

  /// `jack_iodelay`'s readings (frames) in its output.
  static func readings(_ output: String) -> [Double] {
    output.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).compactMap { line in
      guard line.contains("total roundtrip latency") else { return nil }
      return line.split(separator: " ").first.flatMap { Double($0) }
    }
  }

  /// Runs `jack_iodelay` for two seconds once `connect` has wired it, and
  /// returns the median of its readings.
  static func iodelay(_ jack: JackServer, connect: () throws -> Void) throws -> Double? {
    let meter = try SpawnedProcess(
      ["stdbuf", "-o0", "jack_iodelay"], environment: jack.environment)
    defer { meter.signal(SIGKILL) }
    try connect()
    usleep(2_500_000)
    meter.signal(SIGTERM)
    let readings = Self.readings(meter.result().output).dropFirst(2).sorted()
    return readings.isEmpty ? nil : readings[readings.count / 2]
  }

  /// `jack_iodelay` measures one period on its own loop and the same
  /// through micloop's loopback: micloop adds no period. `micloop latency`
  /// on its own loop agrees with it within a frame.
  @Test(arguments: [16, 32, 64])
  func nativeLoopbackAddsNothingToJackIODelay(period: Int) throws {
    let jack = try Self.server(periodFrames: period)
    let own = try Self.iodelay(jack) { () throws in
      #expect(try jack.connect(output: "jack_delay:out", input: "jack_delay:in"))
    }
    let loop = try jack.startMicloop(["loopback", "-D", "jack:none", "--duration", "60"])
    defer { loop.signal(SIGKILL) }
    #expect(loop.waitForOutput("Hz, capture"))
    let through = try Self.iodelay(jack) { () throws in
      #expect(try jack.connect(output: "jack_delay:out", input: "micloop:capture_1"))
      #expect(try jack.connect(output: "micloop:playback_1", input: "jack_delay:in"))
    }
    loop.signal(SIGINT)
    #expect(loop.result().status == 0)
    let ownFrames = try #require(own, "jack_iodelay measured nothing on its own loop\n\(jack.log)")
    let throughFrames = try #require(through, "nothing through micloop\n\(jack.log)")
    #expect(abs(ownFrames - Double(period)) < 0.1, "own loop \(ownFrames) frames")
    #expect(abs(throughFrames - ownFrames) < 0.1, "through micloop \(throughFrames) frames")
    // micloop's own measurement of its own loop.
    let probe = try jack.startMicloop(["latency", "-D", "jack:none", "--json"])
    #expect(try jack.connect(output: "micloop:playback_1", input: "micloop:capture_1"))
    let result = probe.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let measured = try #require(
      result.lastJSONObject?["round_trip_frames"] as? Int, "\(result.output)")
    #expect(abs(Double(measured) - ownFrames) <= 1, "micloop latency \(measured) frames")
    #expect(result.lastJSONObject?["unit_buffer_frames"] as? Int == 0)
  }

  @Test func aToneLoopedThroughTheNativeClientComesOutAtItsGain() throws {
    let jack = try Self.server(periodFrames: 256)
    let meter = try jack.startMicloop(["meter", "-D", "jack:none", "--duration", "60", "--json"])
    defer { meter.signal(SIGKILL) }
    #expect(meter.waitForOutput("\"start\""))
    let loop = try jack.startMicloop([
      "loopback", "--capture", "jack:none", "--playback", "jack:^micloop:capture_1$",
      "--gain-db", "-6", "--duration", "60",
    ])
    defer { loop.signal(SIGKILL) }
    #expect(loop.waitForOutput("Hz, capture"))
    let tone = try jack.startMicloop([
      "tone", "-f", "1000", "--level-db", "-10", "--duration", "60", "-D",
      "jack:^micloop-01:capture_1$",
    ])
    defer { tone.signal(SIGKILL) }
    let result = JackLiveTests.meterOnceSoundArrives(meter)
    #expect(result.status == 0, "\(result.errorOutput)\njackd: \(jack.log)")
    let peak = try #require(result.lastJSONObject?["peak_dbfs"] as? Double, "\(result.output)")
    #expect(abs(peak - -16) < 0.05, "peak \(peak) dBFS")
  }

  @Test func aRecordingHoldsEverySamplePlayedIntoTheNativeClient() throws {
    let jack = try Self.server(periodFrames: 256)
    let noise = directory.appendingPathComponent("noise.wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-D", "-n", "-r", "48000", "-b", "16", "-c", "1", noise, "synth", "3",
      "whitenoise", "vol", "0.3", "pad", "1.5", "0",
    ])
    let recording = directory.appendingPathComponent("recording.wav").path
    try RecordingComparison.expectExact(played: noise, recording: recording) {
      let loop = try jack.startMicloop([
        "loopback", "-D", "jack:none", "--record", recording, "--duration", "7",
      ])
      defer { loop.signal(SIGKILL) }
      #expect(loop.waitForOutput("Hz, capture"))
      let player = try jack.play(noise)
      #expect(try jack.connect(output: "aplay.P.\(player.pid).", input: "micloop:capture_1"))
      var result = loop.result()
      jack.finish(player, into: &result)
      return result
    }
  }

  @Test func tonesSentToTheNativeClientAreDecodedLive() throws {
    let jack = try Self.server(periodFrames: 256)
    let result = try LiveAttempts.run {
      let tones = try jack.startMicloop([
        "tones", "--plan", "dtmf,ccir", "-D", "jack:none", "--json", "--duration", "30",
      ])
      defer { tones.signal(SIGKILL) }
      #expect(tones.waitForOutput("\"start\""))
      for (plan, text) in [("dtmf", "0#*9"), ("ccir", "12335")] {
        let send = try jack.startMicloop([
          "send", "--plan", plan, text, "-D", "jack:^micloop:capture_1$",
        ])
        #expect(send.wait() == 0, "\(send.result().errorOutput)")
      }
      usleep(500_000)
      tones.signal(SIGINT)
      let result = tones.result()
      let passed = TonesCommandTests.heard(result.output, dtmf: "0#*9", texts: ["12335"])
      return (result, passed, result.output + jack.log)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = TonesCommandTests.events(result.output)
    #expect(TonesCommandTests.symbols(events, plan: "dtmf") == "0#*9", "\(result.output)")
    #expect(TonesCommandTests.texts(events) == ["12335"], "\(result.output)")
  }

  /// A client that never deactivates keeps what a patchbay connected
  /// through every xrun: 100 forced by stopping a competing client, and
  /// buffer-size changes.
  @Test func connectionsMadeOutsideSurviveForcedXruns() throws {
    let jack = try Self.server(periodFrames: 64)
    let loop = try jack.startMicloop(["loopback", "-D", "jack:none", "--json", "--duration", "60"])
    defer { loop.signal(SIGKILL) }
    #expect(loop.waitForOutput("\"start\""))
    #expect(try jack.connect(output: "system:capture_1", input: "micloop:capture_1"))
    #expect(try jack.connect(output: "micloop:playback_1", input: "system:playback_1"))
    let rival = try SpawnedProcess(["jack_iodelay"], environment: jack.environment)
    defer { rival.signal(SIGKILL) }
    #expect(try jack.connect(output: "jack_delay:out", input: "jack_delay:in"))
    for _ in 0..<100 {
      rival.signal(SIGSTOP)
      usleep(10_000)
      rival.signal(SIGCONT)
      usleep(10_000)
    }
    for frames in [128, 64, 256, 64] {
      #expect(
        try VirtualDevices.wait(for: ["jack_bufsize", "\(frames)"], environment: jack.environment)
          == 0)
      usleep(300_000)
    }
    let connections = try jack.connections()
    #expect(connections["micloop:capture_1"] == ["system:capture_1"], "\(connections)")
    #expect(connections["micloop:playback_1"] == ["system:playback_1"], "\(connections)")
    loop.signal(SIGINT)
    let result = loop.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("\"event\":\"xrun\""), "no xrun was reported\n\(jack.log)")
    #expect(result.output.contains("\"summary\""))
  }

  /// A server killed under `loopback -D jack --reconnect --record F` and
  /// started again: device_lost, device_back, the client's ports back with
  /// their connections to the physical ports, and F valid with the gap
  /// filled to its length.
  @Test func aKilledServerIsBridgedWithPortsAndConnectionsRestored() throws {
    let jack = try Self.server(periodFrames: 256)
    let recording = directory.appendingPathComponent("bridged.wav").path
    let job = try jack.startMicloop([
      "loopback", "-D", "jack", "--reconnect", "--fill-gaps", "--record", recording, "--json",
      "--duration", "60",
    ])
    defer { job.signal(SIGKILL) }
    #expect(job.waitForOutput("\"start\""))
    usleep(1_500_000)
    jack.crash()
    #expect(job.waitForOutput("\"device_lost\"", timeout: 30), "\(job.printedSoFar)")
    try jack.restart()
    #expect(job.waitForOutput("\"device_back\"", timeout: 30), "\(job.printedSoFar)")
    var connections = [String: [String]]()
    for _ in 0..<50 where connections["micloop:playback_1"]?.isEmpty ?? true {
      usleep(100_000)
      connections = try jack.connections()
    }
    #expect(connections["micloop:capture_1"] == ["system:capture_1"], "\(connections)")
    #expect(
      connections["micloop:playback_1"]?.sorted() == ["system:playback_1", "system:playback_2"],
      "\(connections)")
    usleep(1_000_000)
    job.signal(SIGINT)
    let result = job.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let events = result.output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    let kinds = events.compactMap { $0["event"] as? String }
    let lost = try #require(kinds.firstIndex(of: "device_lost"), "\(kinds)")
    let back = try #require(kinds.firstIndex(of: "device_back"), "\(kinds)")
    #expect(lost < back)
    #expect(kinds.filter { $0 == "summary" }.count == 1)
    let gap = try #require(events[back]["gap_seconds"] as? Double)
    let streamSeconds = try #require(events.last?["duration"] as? Double)
    let reader = try AudioFileReader(path: recording)
    let fileSeconds = Double(try #require(reader.declaredFrameCount)) / 48_000
    #expect(abs(fileSeconds - (streamSeconds + gap)) < 0.2, "\(fileSeconds) s in the file")
  }

  /// Connections made from outside (`jack_connect`) to the ports of
  /// `loopback -D jack:none --reconnect` come back after the server is
  /// killed and started again: the one to the server's own port at once,
  /// those to `jack_iodelay`'s ports once it is started again after
  /// `device_back`; the one to `jack_metro`, which is not started again, is
  /// reported as not restored.
  @Test func connectionsMadeOutsideAreRestoredAfterTheServerIsBack() throws {
    let jack = try Self.server(periodFrames: 256)
    let job = try jack.startMicloop([
      "loopback", "-D", "jack:none", "--reconnect", "--json", "--duration", "60",
    ])
    defer { job.signal(SIGKILL) }
    #expect(job.waitForOutput("\"start\""))
    var peer = try SpawnedProcess(["jack_iodelay"], environment: jack.environment)
    defer { peer.signal(SIGKILL) }
    let metro = try SpawnedProcess(
      ["jack_metro", "-b", "120", "-n", "metro"], environment: jack.environment)
    defer { metro.signal(SIGKILL) }
    let made = [
      ("system:capture_1", "micloop:capture_1"), ("jack_delay:out", "micloop:capture_1"),
      ("micloop:playback_1", "jack_delay:in"), ("metro:120_bpm", "micloop:capture_1"),
    ]
    for (output, input) in made {
      #expect(try jack.connect(output: output, input: input), "\(output) → \(input)")
    }
    usleep(500_000)
    jack.crash()
    peer.signal(SIGKILL)
    metro.signal(SIGKILL)
    #expect(job.waitForOutput("\"device_lost\"", timeout: 30), "\(job.printedSoFar)")
    try jack.restart()
    #expect(job.waitForOutput("\"device_back\"", timeout: 30), "\(job.printedSoFar)")
    usleep(1_000_000)
    peer = try SpawnedProcess(["jack_iodelay"], environment: jack.environment)
    var connections = [String: [String]]()
    for _ in 0..<50 where connections["micloop:capture_1"]?.count ?? 0 < 2 {
      usleep(100_000)
      connections = try jack.connections()
    }
    #expect(
      connections["micloop:capture_1"]?.sorted() == ["jack_delay:out", "system:capture_1"],
      "\(connections)")
    #expect(connections["micloop:playback_1"] == ["jack_delay:in"], "\(connections)")
    #expect(
      job.waitForOutput("\"connections_restored\"", timeout: 20), "\(job.printedSoFar)")
    job.signal(SIGINT)
    let result = job.result()
    #expect(result.status == 0, "\(result.errorOutput)")
    let report = try #require(
      result.output.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }.first { $0["event"] as? String == "connections_restored" }, "\(result.output)")
    let restored = (report["restored"] as? [String] ?? []).sorted()
    #expect(
      restored == [
        "jack_delay:out → micloop:capture_1", "micloop:playback_1 → jack_delay:in",
        "system:capture_1 → micloop:capture_1",
      ], "\(report)")
    #expect(
      report["not_restored"] as? [String] == ["metro:120_bpm → micloop:capture_1"], "\(report)")
  }

  /// Two micloop clients, one's playback connected to the other's capture,
  /// and the server killed and started again, the second opening first so
  /// that the two swap names: each finds its connection (under its old
  /// name) and reports it as not restored, and no client is connected to
  /// itself.
  @Test func twoClientsEachReportTheirConnectionAfterARestart() throws {
    let jack = try Self.server(periodFrames: 256)
    let arguments = ["loopback", "-D", "jack:none", "--reconnect", "--json", "--duration", "60"]
    let first = try jack.startMicloop(arguments)
    defer { first.signal(SIGKILL) }
    #expect(first.waitForOutput("\"start\""))
    let second = try jack.startMicloop(arguments)
    defer { second.signal(SIGKILL) }
    #expect(second.waitForOutput("\"start\""))
    #expect(try jack.connect(output: "micloop-01:playback_1", input: "micloop:capture_1"))
    usleep(500_000)
    jack.crash()
    for job in [first, second] {
      #expect(job.waitForOutput("\"device_lost\"", timeout: 30), "\(job.printedSoFar)")
    }
    // The second opens first and takes the name "micloop": the two swap.
    first.signal(SIGSTOP)
    try jack.restart()
    #expect(second.waitForOutput("\"device_back\"", timeout: 30), "\(second.printedSoFar)")
    first.signal(SIGCONT)
    for job in [first, second] {
      #expect(job.waitForOutput("\"connections_restored\"", timeout: 30), "\(job.printedSoFar)")
    }
    let connections = try jack.connections()
    for (port, peers) in connections {
      let client = port.split(separator: ":").first.map(String.init) ?? port
      #expect(!peers.contains { $0.hasPrefix(client + ":") }, "\(port) → \(peers)")
    }
    for job in [first, second] {
      job.signal(SIGINT)
      let result = job.result()
      #expect(result.status == 0, "\(result.errorOutput)")
      let report = try #require(
        result.output.split(separator: "\n").compactMap {
          try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "connections_restored" }, "\(result.output)")
      let named =
        (report["restored"] as? [String] ?? []) + (report["not_restored"] as? [String] ?? [])
      #expect(named.count == 1, "\(report)")
    }
  }

  @Test func devicesListsTheServersPorts() throws {
    let jack = try Self.server(periodFrames: 256)
    let result = try jack.startMicloop(["devices", "--json"]).result()
    #expect(result.status == 0, "\(result.errorOutput)")
    for port in ["system:capture_1", "system:playback_1"] {
      #expect(result.output.contains("\"name\":\"jack:\(port)\""), "\(result.output)")
    }
  }

  /// micloop stopped for 50 ms: the server ran the graph without it, and
  /// micloop reports one xrun with the frames it lost.
  /// At 256 frames a cycle: at 64 a busy machine loses cycles of its own
  /// (real losses, reported too) longer than the four quanta that tell
  /// the stall apart.
  /// A loaded machine can hold the dummy driver up with micloop, so that
  /// the server drops one cycle instead of the stall's: such an attempt
  /// is printed and tried once more.
  @Test func aStallIsReportedAsOneLossOfItsLength() throws {
    let jack = try Self.server(periodFrames: 256)
    let (result, stopped) = try LiveAttempts.runAgainAfterAnyShortfall {
      let loop = try jack.startMicloop([
        "loopback", "-D", "jack:none", "--json", "--duration", "60",
      ])
      defer { loop.signal(SIGKILL) }
      let (result, stopped) = NativeLoss.stallOnce(loop)
      let passed =
        result.status == 0
        && NativeLoss.holdsOneLoss(in: result.output, lasting: stopped, quantum: 256)
      return ((result, stopped), passed, result.output + jack.log)
    }
    #expect(result.status == 0, "\(result.errorOutput)")
    NativeLoss.expectOneLoss(in: result.output, lasting: stopped, quantum: 256)
  }
}

/// Stalls of a native client and the losses it reports.
enum NativeLoss {
  /// How long a process was stopped, as the test can know it: at least
  /// the time between its two signals, at most from before the first to
  /// after the second (a loaded machine may hold the test itself there).
  struct Stall {
    var least: Double
    var most: Double
  }

  /// Once `loop` has started, stops it for 50 ms a second in and ends it
  /// a second later (SIGINT); what it printed, and how long it was stopped.
  static func stallOnce(_ loop: SpawnedProcess) -> (MicLoopBinary.Result, Stall) {
    #expect(loop.waitForOutput("\"start\""))
    usleep(1_000_000)
    let stopped = stop(loop, seconds: 0.05)
    usleep(1_000_000)
    loop.signal(SIGINT)
    return (loop.result(), stopped)
  }

  /// Stops `process` for about `seconds`; returns how long it was stopped.
  static func stop(_ process: SpawnedProcess, seconds: Double) -> Stall {
    let before = Date()
    process.signal(SIGSTOP)
    let stopped = Date()
    usleep(UInt32(seconds * 1e6))
    let resuming = Date()
    process.signal(SIGCONT)
    return Stall(
      least: resuming.timeIntervalSince(stopped), most: Date().timeIntervalSince(before))
  }

  /// Quanta a reported loss may fall short of the stall: a graph that
  /// waits for a late client before it gives up on it runs on late itself
  /// (PipeWire under load has fallen 2.3 quanta short).
  static let shortfallQuanta = 3

  /// Expects the xrun events of `output` to hold one loss as long as the
  /// stall (within two quanta and a millisecond above it, and
  /// `shortfallQuanta` below), beside the cycle-long ones a timer-driven
  /// graph drops now and then.
  static func expectOneLoss(in output: String, lasting stall: Stall, quantum: Int) {
    let (losses, matching, long) = measure(output, lasting: stall, quantum: quantum)
    #expect(
      matching == 1,
      "losses \(losses), the stall \(Int(stall.least * 48_000))-\(Int(stall.most * 48_000)) frames")
    #expect(long == 1, "losses \(losses)")
  }

  /// Whether `output` holds what `expectOneLoss` expects.
  static func holdsOneLoss(in output: String, lasting stall: Stall, quantum: Int) -> Bool {
    let (_, matching, long) = measure(output, lasting: stall, quantum: quantum)
    return matching == 1 && long == 1
  }

  /// The losses `output` reports, how many are as long as the stall, and
  /// how many are longer than four quanta.
  private static func measure(_ output: String, lasting stall: Stall, quantum: Int)
    -> (losses: [Int], matching: Int, long: Int)
  {
    let losses = output.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["lost_frames"]
        as? Int
    }
    let least = stall.least * 48_000 - Double(shortfallQuanta * quantum) - 48
    let most = stall.most * 48_000 + Double(2 * quantum) + 48
    let matching = losses.filter { Double($0) >= least && Double($0) <= most }.count
    return (losses, matching, losses.filter { $0 > 4 * quantum }.count)
  }
}
