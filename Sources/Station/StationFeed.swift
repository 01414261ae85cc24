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

  /// One JSON line (without its newline) for every client of `/events`.
  public func publish(_ line: String) {
    state.withLock { $0.lines.append(line) }
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
