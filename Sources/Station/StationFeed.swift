import Synchronization

/// What a running job hands its station: each event's JSON line, the
/// recordings its session listed, and (through `metrics`) the numbers
/// `/metrics` shows. The job's control thread publishes; the server's tasks
/// read. Every call takes one short lock around a bounded in-memory update
/// and returns: no I/O, no waiting on clients, so a slow client never slows
/// the job. Never call it from the audio thread.
public final class StationFeed: Sendable {
  private struct State {
    var lines: LineRing
    var recordings: [RecordingEntry] = []
    /// The clients of `/events` waiting for a line, by ticket.
    var waits: [Int: Wait] = [:]
    var nextTicket = 0

    /// Takes every client that is waiting, to be woken outside the lock.
    mutating func takeWaiting() -> [CheckedContinuation<Void, Never>] {
      var woken = [CheckedContinuation<Void, Never>]()
      for (ticket, wait) in waits {
        if case .waiting(let continuation) = wait {
          woken.append(continuation)
          waits[ticket] = nil
        }
      }
      return woken
    }
  }

  /// Where one client's wait stands: taken a ticket, waiting, or cancelled
  /// before it could wait.
  private enum Wait {
    case starting
    case waiting(CheckedContinuation<Void, Never>)
    case cancelled
  }

  private let state: Mutex<State>
  /// The Prometheus registry and its metrics, updated by the control thread.
  public let metrics: StationMetrics
  let limits: StationLimits

  public init(limits: StationLimits = StationLimits(), version: String) {
    self.limits = limits
    state = Mutex(State(lines: LineRing(capacity: max(limits.feedLines, limits.clientQueueLines))))
    metrics = StationMetrics(version: version)
  }

  /// One JSON line (without its newline) for every client of `/events`;
  /// wakes the clients waiting for it.
  public func publish(_ line: String) {
    let woken = state.withLock { state in
      state.lines.append(line)
      return state.takeWaiting()
    }
    for continuation in woken { continuation.resume() }
  }

  /// Wakes every client waiting for a line (the server's heartbeat, so an
  /// idle stream can send its keep-alive).
  func wakeWaiting() {
    let woken = state.withLock { $0.takeWaiting() }
    for continuation in woken { continuation.resume() }
  }

  /// Clients with a ticket to wait (waiting, or about to); for tests.
  var waitingClients: Int { state.withLock { $0.waits.count } }

  /// Returns once a line after `cursor` is published, the heartbeat wakes
  /// the waiting clients, or the calling task is cancelled. Server tasks.
  func waitForLine(after cursor: Int) async {
    let ticket = state.withLock { state in
      state.nextTicket += 1
      state.waits[state.nextTicket] = .starting
      return state.nextTicket
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumesNow = state.withLock { state in
          if case .cancelled = state.waits[ticket] {
            state.waits[ticket] = nil
            return true
          }
          if state.lines.next > cursor {
            state.waits[ticket] = nil
            return true
          }
          state.waits[ticket] = .waiting(continuation)
          return false
        }
        if resumesNow { continuation.resume() }
      }
    } onCancel: {
      let woken = state.withLock { state -> CheckedContinuation<Void, Never>? in
        switch state.waits[ticket] {
        case .waiting(let continuation):
          state.waits[ticket] = nil
          return continuation
        case .starting:
          state.waits[ticket] = .cancelled
          return nil
        case .cancelled, nil:
          return nil
        }
      }
      woken?.resume()
    }
  }

  /// A recording the session listed in its index: `/recordings` lists it
  /// and `/recordings/NAME` serves it.
  public func addRecording(_ entry: RecordingEntry) {
    state.withLock { state in
      state.recordings.removeAll { $0.name == entry.name }
      state.recordings.append(entry)
    }
  }

  /// A recording the session deleted (retention): no longer served.
  public func removeRecording(named name: String) {
    state.withLock { state in state.recordings.removeAll { $0.name == name } }
  }

  /// The listed recordings, oldest first.
  public var recordings: [RecordingEntry] { state.withLock { $0.recordings } }

  /// The entry listed under exactly `name`, if any.
  func recording(named name: String) -> RecordingEntry? {
    state.withLock { state in state.recordings.first { $0.name == name } }
  }

  /// The sequence number the next published line will get.
  var head: Int { state.withLock { $0.lines.next } }

  /// Lines from `cursor` on and the cursor after them; nil when the client
  /// at `cursor` has fallen further behind than its queue allows.
  func lines(from cursor: Int) -> (lines: [String], next: Int)? {
    state.withLock { state in
      guard state.lines.next - cursor <= limits.clientQueueLines else { return nil }
      return state.lines.lines(from: cursor, limit: limits.clientQueueLines)
    }
  }

  /// True when a client at `cursor` has fallen further behind than its queue allows.
  func isOverflowing(_ cursor: Int) -> Bool {
    state.withLock { $0.lines.next - cursor > limits.clientQueueLines }
  }
}
