import Foundation
import Synchronization
import Testing

@testable import DuplexIO

/// The book of a JACK client's connections and the restorer that makes
/// them again, without a server: connections are plain values and the
/// restorer's `connect` a closure the test controls.
@Suite struct JackConnectionRestoreTests {
  static let fromSystem = JackPortConnection(
    output: .other("system:capture_1"), input: .own("capture_1"))
  static let toDelay = JackPortConnection(
    output: .own("playback_1"), input: .other("jack_delay:in"))
  static let selfLoop = JackPortConnection(output: .own("playback_1"), input: .own("capture_1"))

  @Test func theBookKeepsWhatIsConnectedInOrderAndForgetsWhatIsBroken() {
    let book = JackConnectionBook()
    book.note(Self.fromSystem, isConnected: true, key: "s/micloop")
    book.note(Self.toDelay, isConnected: true, key: "s/micloop")
    book.note(Self.selfLoop, isConnected: true, key: "s/micloop-01")
    book.note(Self.fromSystem, isConnected: false, key: "s/micloop")
    book.note(Self.fromSystem, isConnected: true, key: "s/micloop")
    book.note(Self.toDelay, isConnected: true, key: "s/micloop")
    #expect(book.take(key: "s/micloop") == [Self.fromSystem, Self.toDelay])
    #expect(book.take(key: "s/micloop").isEmpty)
    book.forget(key: "s/micloop-01")
    #expect(book.take(key: "s/micloop-01").isEmpty)
  }

  /// Two clients of one process's server swapped names when the server
  /// came back: the one that returns under a new name still finds its
  /// connections (the only lost ones), and none is made to a port that is
  /// now its own.
  @Test func aClientBackUnderAnotherNameFindsItsConnectionsAndMakesNoneToItself() {
    let book = JackConnectionBook()
    let fromPeer = JackPortConnection(
      output: .other("micloop-01:playback_1"), input: .own("capture_1"))
    book.note(fromPeer, isConnected: true, key: "s/micloop")
    #expect(book.take(key: "s/micloop-01").isEmpty)
    #expect(book.takeSole(server: "s") == [fromPeer])
    #expect(book.takeSole(server: "s").isEmpty)
    #expect(!fromPeer.isRestorable(asClient: "micloop-01"))
    #expect(fromPeer.isRestorable(asClient: "micloop"))
    book.note(Self.fromSystem, isConnected: true, key: "s/micloop")
    book.note(Self.toDelay, isConnected: true, key: "s/micloop-02")
    #expect(book.takeSole(server: "s").isEmpty, "two lost clients: which was whose is not known")
    #expect(book.takeSole(server: "other").isEmpty)
  }

  @Test func ownPortsAreNamedAfterTheClientThatRestoresThem() {
    #expect(
      Self.fromSystem.description(client: "micloop") == "system:capture_1 → micloop:capture_1")
    #expect(
      Self.selfLoop.description(client: "micloop-01")
        == "micloop-01:playback_1 → micloop-01:capture_1")
  }

  /// Polls `restorer` for its report for up to 5 s.
  static func report(of restorer: JackConnectionRestorer) -> RestoredConnections? {
    for _ in 0..<500 {
      if let report = restorer.takeReport() { return report }
      usleep(10_000)
    }
    return nil
  }

  @Test func aConnectionWaitsForItsPortAndOneThatNeverComesIsReported() throws {
    let portsAppeared = EventSignal()
    final class Flag: Sendable { let isRaised = Atomic<Bool>(false) }
    let peerIsBack = Flag()
    let restorer = JackConnectionRestorer(
      [Self.fromSystem, Self.toDelay, Self.selfLoop], timeout: 1, portsAppeared: portsAppeared,
      connect: { connection in
        connection == Self.fromSystem
          || (connection == Self.toDelay && peerIsBack.isRaised.load(ordering: .acquiring))
      },
      describe: { $0.description(client: "micloop") })
    usleep(100_000)
    #expect(restorer.takeReport() == nil, "it reported before its peers could come back")
    peerIsBack.isRaised.store(true, ordering: .releasing)
    portsAppeared.signal()
    let report = try #require(Self.report(of: restorer))
    #expect(
      report.restored == [
        "system:capture_1 → micloop:capture_1", "micloop:playback_1 → jack_delay:in",
      ])
    #expect(report.notRestored == ["micloop:playback_1 → micloop:capture_1"])
    #expect(restorer.stop(wakingWith: portsAppeared).isEmpty)
  }

  @Test func aStopHandsBackWhatWasStillToBeMade() {
    let portsAppeared = EventSignal()
    let restorer = JackConnectionRestorer(
      [Self.fromSystem, Self.toDelay], timeout: 60, portsAppeared: portsAppeared,
      connect: { $0 == Self.fromSystem }, describe: { $0.description(client: "micloop") })
    usleep(100_000)
    #expect(restorer.stop(wakingWith: portsAppeared) == [Self.toDelay])
  }
}
