import DuplexIO
import DuplexIOTesting
import Foundation
import Synchronization
import TestSupport
import Testing

/// The unit on a callback-driven backend (JACK, PipeWire), with the
/// server's cycles run by the test: the same contract as on ALSA.
@Suite struct ServerCycleTests {
  func started(
    _ server: SimulatedServer, _ client: RecordingClient,
    configuration: DuplexConfiguration = duplexConfiguration()
  ) throws -> DuplexUnit<SimulatedServer, RecordingClient> {
    let unit = DuplexUnit(configuration: configuration, backend: server, client: client)
    try unit.initialize()
    try unit.start()
    return unit
  }

  @Test func eachCycleRendersInputThenOutputInTheSameCall() throws {
    let server = SimulatedServer(periodFrames: 64)
    let client = RecordingClient()
    let unit = try started(server, client)
    for _ in 0..<10 { #expect(server.cycle(frames: 64)) }
    unit.stop()
    #expect(String(client.order) == String(repeating: "io", count: 10))
    #expect(client.inputTimes == (0..<10).map { Int64($0 * 64) })
    #expect(client.outputTimes == client.inputTimes)
    // What is played in a cycle is that cycle's input: no added period.
    #expect(
      Float(bitPattern: server.lastPlayedSample.load(ordering: .relaxed))
        == SimulatedDevicePair.capturedSample(10 * 64 - 1) * 0.5)
    #expect(unit.granted?.loopBufferFrames == 0)
    #expect(unit.statistics.periods.load(ordering: .relaxed) == 10)
  }

  /// A server may change its cycle while running (jack_bufsize, another
  /// PipeWire client's quantum): the client is prepared for the largest,
  /// and sample time follows each cycle's frames.
  @Test func aCycleOfAnotherSizeIsTakenAsItComes() throws {
    let server = SimulatedServer(periodFrames: 64, maximumCycleFrames: 8192)
    let client = RecordingClient()
    let unit = try started(server, client)
    #expect(client.preparedFormats.first?.maximumFrameCount == 8192)
    let sizes = [64, 64, 256, 8192, 32, 64]
    for frames in sizes { server.cycle(frames: frames) }
    unit.stop()
    var time: Int64 = 0
    let expected = sizes.map { frames -> Int64 in
      defer { time += Int64(frames) }
      return time
    }
    #expect(client.inputTimes == expected)
    #expect(
      client.firstSamples.last == SimulatedDevicePair.capturedSample(64 + 64 + 256 + 8192 + 32))
  }

  @Test func lossesAreCountedAndFlaggedInThePeriodThatFollowsThem() throws {
    let server = SimulatedServer(periodFrames: 32)
    let client = RecordingClient()
    let unit = try started(server, client)
    server.cycle(frames: 32)
    server.cycle(frames: 32, losses: CycleLosses(xruns: 1, lostFrames: 2368))
    server.cycle(frames: 32)
    // A notice that belongs to a stall already counted: flagged, not counted.
    server.cycle(frames: 32, losses: CycleLosses(xruns: 0, lostFrames: 64))
    server.cycle(frames: 32)
    unit.stop()
    #expect(unit.statistics.overruns.load(ordering: .relaxed) == 1)
    #expect(unit.statistics.lostFrames.load(ordering: .relaxed) == 2432)
    let both: IOFlags = [.inputOverrun, .outputUnderrun]
    #expect(client.inputFlags == [[], both, [], both, []])
    // Sample time counts the frames delivered, as after an ALSA overrun.
    #expect(client.inputTimes == [0, 32, 64, 96, 128])
  }

  @Test func lossesJustAfterStartSettleOnlyForTheSpeaker() throws {
    var configuration = duplexConfiguration()
    configuration.settlingTime = 0.01  // 480 frames
    // Playing only: an early loss is the server filling its queue.
    var playing = configuration
    playing.direction = .playback
    let server = SimulatedServer(periodFrames: 64)
    let unit = try started(server, RecordingClient(), configuration: playing)
    server.cycle(frames: 64, losses: CycleLosses(xruns: 1))
    for _ in 0..<10 { server.cycle(frames: 64) }
    server.cycle(frames: 64, losses: CycleLosses(xruns: 1))
    unit.stop()
    #expect(unit.statistics.settlingXruns.load(ordering: .relaxed) == 1)
    #expect(unit.statistics.underruns.load(ordering: .relaxed) == 1)
    // Capturing: an early loss lost captured audio, and counts.
    let capturing = SimulatedServer(periodFrames: 64)
    let duplex = try started(capturing, RecordingClient(), configuration: configuration)
    capturing.cycle(frames: 64, losses: CycleLosses(xruns: 1))
    duplex.stop()
    #expect(duplex.statistics.settlingXruns.load(ordering: .relaxed) == 0)
    #expect(duplex.statistics.overruns.load(ordering: .relaxed) == 1)
  }

  @Test func aServerThatGoesAwayEndsTheUnitAsALostDevice() throws {
    let server = SimulatedServer()
    let client = RecordingClient()
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: server, client: client)
    let heard = Mutex<[(StopReason, pthread_t)]>([])
    unit.onStop = { reason in heard.withLock { $0.append((reason, pthread_self())) } }
    try unit.initialize()
    try unit.start()
    server.cycle(frames: 64)
    #expect(!unit.waitUntilStopped(timeout: 0))
    server.end()
    #expect(unit.waitUntilStopped(timeout: 10))
    #expect(!unit.isRunning)
    let failure = try #require(unit.failure)
    #expect(failure.isDeviceLost)
    // Cycles after the end reach no client.
    #expect(!server.cycle(frames: 64))
    unit.stop()
    let reports = heard.withLock { $0 }
    #expect(reports.count == 1)
    #expect(reports.first?.0 == .failed(failure))
    #expect(reports.allSatisfy { pthread_equal($0.1, pthread_self()) == 0 })
    #expect(client.order.count == 2)
  }

  @Test func noCycleReachesTheClientOnceStopReturns() throws {
    let server = SimulatedServer()
    let client = RecordingClient()
    let unit = try started(server, client)
    server.cycle(frames: 64)
    unit.stop()
    #expect(server.halts.load(ordering: .relaxed) == 1)
    #expect(!server.cycle(frames: 64))
    #expect(client.order.count == 2)
    #expect(unit.waitUntilStopped(timeout: 0))
  }

  /// A cycle running on the server's thread while the owner stops: `stop`
  /// waits for it, and the client never runs after `stop` returns.
  @Test func stopWaitsForACycleInProgressOnTheServerThread() throws {
    let server = SimulatedServer(periodFrames: 256)
    let client = RecordingClient()
    let unit = try started(server, client)
    let running = Atomic<Bool>(true)
    let thread = Thread {
      while running.load(ordering: .acquiring) { server.cycle(frames: 256) }
    }
    thread.start()
    while client.order.count < 20 { usleep(100) }
    unit.stop()
    let seen = client.order.count
    usleep(20_000)
    #expect(client.order.count == seen)
    #expect(seen % 2 == 0)
    running.store(false, ordering: .releasing)
  }

  /// Commands that play stop rendering, then let the server play what it
  /// has; the streams are halted only after the drain.
  @Test func aDrainHaltsAfterTheLastPeriod() throws {
    let server = SimulatedServer()
    let unit = try started(server, RecordingClient())
    server.cycle(frames: 64)
    unit.stopAfterDrain()
    #expect(server.halts.load(ordering: .relaxed) == 1)
    #expect(!server.cycle(frames: 64))
  }

  @Test func noAllocationsOnTheServerThreadAfterStart() throws {
    let server = SimulatedServer(periodFrames: 128)
    let client = WatchedClient(RecordingClient())
    let unit = DuplexUnit(configuration: duplexConfiguration(), backend: server, client: client)
    try unit.initialize()
    try unit.start()
    let done = Atomic<Bool>(false)
    let thread = Thread {
      for index in 0..<5000 {
        let losses = index % 500 == 499 ? CycleLosses(xruns: 1, lostFrames: 128) : .none
        server.cycle(frames: index % 3 == 0 ? 128 : 64, losses: losses)
      }
      done.store(true, ordering: .releasing)
    }
    thread.start()
    while !done.load(ordering: .acquiring) { usleep(1_000) }
    unit.stop()
    #expect(client.periods == 5000)
    #expect(client.allocations.load(ordering: .acquiring) == 0)
  }
}
