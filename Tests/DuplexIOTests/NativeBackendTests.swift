import DuplexIO
import Foundation
import TestSupport
import Testing

/// The native backends in this process, against private servers the tests
/// start: the period runs on the server's thread, and from its second
/// period on nothing there allocates (the unit, the backend, the server's
/// own code between cycles). A server that cannot start fails the test.
@Suite(.serialized) struct NativeBackendTests {
  /// Cycles watched: a few seconds at 64 frames.
  static let watchedPeriods = 1_500

  func configuration(_ device: String) -> DuplexConfiguration {
    var configuration = duplexConfiguration()
    configuration.captureDevice = device
    configuration.playbackDevice = device
    configuration.periodFrames = 64
    return configuration
  }

  func runWatched<Backend: DuplexBackend>(_ backend: Backend, device: String) throws
    -> WatchedClient<RecordingClient>
  {
    let client = WatchedClient(RecordingClient())
    let unit = DuplexUnit(configuration: configuration(device), backend: backend, client: client)
    try unit.initialize()
    #expect(unit.granted?.periodFrames == 64)
    #expect(unit.granted?.isServerCycle == true)
    try unit.start()
    let deadline = Date().addingTimeInterval(30)
    while client.periods < Self.watchedPeriods && Date() < deadline && unit.isRunning {
      usleep(10_000)
    }
    unit.stop()
    #expect(unit.failure == nil)
    unit.uninitialize()
    // Input before output in every cycle, on the server's thread.
    #expect(String(client.inner.order.prefix(20)) == String(repeating: "io", count: 10))
    #expect(client.inner.audioThread.map { pthread_equal($0, pthread_self()) == 0 } == true)
    return client
  }

  @Test func jackCyclesNeverAllocate() throws {
    let server = try PrivateJackServer(periodFrames: 64)
    defer { server.stop() }
    let client = try runWatched(JackBackend(serverName: server.name), device: "jack:none")
    #expect(client.periods >= Self.watchedPeriods)
    #expect(client.allocations.load(ordering: .acquiring) == 0)
  }

  @Test func pipeWireCyclesNeverAllocate() throws {
    let server = try PrivatePipeWire()
    defer { server.stop() }
    let client = try runWatched(PipeWireBackend(remote: server.socket), device: "pw:none")
    #expect(client.periods >= Self.watchedPeriods)
    #expect(client.allocations.load(ordering: .acquiring) == 0)
  }

  /// The node's clock comes from the graph: every period is the quantum
  /// asked for, and sample time advances by it.
  @Test func pipeWireRunsTheQuantumAskedFor() throws {
    let server = try PrivatePipeWire()
    defer { server.stop() }
    for quantum in [32, 128] {
      var configuration = configuration("pw:none")
      configuration.periodFrames = quantum
      let client = RecordingClient()
      let unit = DuplexUnit(
        configuration: configuration, backend: PipeWireBackend(remote: server.socket),
        client: client)
      try unit.initialize()
      #expect(unit.granted?.periodFrames == quantum)
      try unit.start()
      while client.inputTimes.count < 50 { usleep(5_000) }
      unit.stop()
      unit.uninitialize()
      let steps = zip(client.inputTimes.dropFirst(), client.inputTimes).map { $0 - $1 }
      #expect(steps.prefix(40).allSatisfy { $0 == Int64(quantum) }, "\(steps)")
    }
  }

  @Test func aPipeWireServerThatIsNotThereIsReportedAsUnreachable() throws {
    let backend = PipeWireBackend(remote: "/nonexistent/pipewire-0")
    do {
      _ = try backend.open(configuration("pw:none"))
      Issue.record("opened a PipeWire server that is not there")
    } catch {
      #expect(error.kind == .serverUnreachable)
      #expect(error.description.contains("/nonexistent/pipewire-0"))
    }
  }
}
