import Foundation
import Testing

@testable import Station

/// A client of `/events` waits on the feed instead of polling it: woken by
/// a new line, by the heartbeat, or by being cancelled, and never left behind.
@Suite struct StationFeedWaitTests {
  let feed = StationFeed(version: "9.9.9")

  @Test func aLinePublishedWakesTheWaitingClient() async {
    let cursor = feed.head
    let waiting = Task { await feed.waitForLine(after: cursor) }
    try? await Task.sleep(for: .milliseconds(50))
    feed.publish(#"{"event":"level"}"#)
    await waiting.value
    #expect(feed.lines(from: cursor)?.lines == [#"{"event":"level"}"#])
    #expect(feed.waitingClients == 0)
  }

  @Test func aLineAlreadyThereReturnsAtOnce() async {
    let cursor = feed.head
    feed.publish("{}")
    await feed.waitForLine(after: cursor)
    #expect(feed.waitingClients == 0)
  }

  @Test func theHeartbeatWakesAnIdleClient() async {
    let cursor = feed.head
    let waiting = Task { await feed.waitForLine(after: cursor) }
    try? await Task.sleep(for: .milliseconds(50))
    feed.wakeWaiting()
    await waiting.value
    #expect(feed.lines(from: cursor)?.lines.isEmpty == true)
  }

  /// Cancelled before it could wait or while waiting: it returns, and no
  /// ticket of it stays in the feed.
  @Test func aCancelledClientReturnsAndLeavesNothing() async {
    let cursor = feed.head
    for delay in [0, 50] {
      let waiting = Task { await feed.waitForLine(after: cursor) }
      if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
      waiting.cancel()
      await waiting.value
    }
    #expect(feed.waitingClients == 0)
  }
}
