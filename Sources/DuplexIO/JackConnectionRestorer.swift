import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Makes again, on a client that replaced one its server lost, the
/// connections the lost client's ports had: at once where both ports exist,
/// and the rest as ports appear (other clients come back after the server;
/// JACK's port-registration notices raise `portsAppeared`), for at most
/// `timeout` seconds. Then `takeReport` says what was and was not restored.
/// Stopped before that (the client stops, or its server is lost again), it
/// hands back the connections it had still to make. It runs on a thread of
/// its own: `jack_connect` may not be called from JACK's notification
/// thread, and the control thread must not wait. Created and stopped on
/// the control thread.
final class JackConnectionRestorer {
  /// What the restoring thread and the control thread share.
  private final class State: Sendable {
    let stopRequested = Atomic<Bool>(false)
    let outcome = Mutex<RestoredConnections?>(nil)
    /// What was still to be made when a stop ended the attempts.
    let unfinished = Mutex<[JackPortConnection]>([])
  }

  private let state = State()
  private var thread: RealtimeThread?

  /// Starts restoring `connections`; `connect` makes one (true when it
  /// exists afterwards, made now or before), `describe` names it.
  init(
    _ connections: [JackPortConnection], timeout: Double, portsAppeared: EventSignal,
    connect: @escaping (JackPortConnection) -> Bool,
    describe: @escaping (JackPortConnection) -> String
  ) {
    let state = state
    thread = try? RealtimeThread(realtimePriority: nil) {
      var pending = connections
      var restored = [String]()
      let deadline = MonotonicClock.seconds + timeout
      while true {
        portsAppeared.reset()
        pending.removeAll { connection in
          guard connect(connection) else { return false }
          restored.append(describe(connection))
          return true
        }
        if state.stopRequested.load(ordering: .acquiring) {
          state.unfinished.withLock { $0 = pending }
          break
        }
        let left = deadline - MonotonicClock.seconds
        if pending.isEmpty || left <= 0 { break }
        _ = portsAppeared.wait(timeout: min(left, Self.retryInterval))
      }
      let report = RestoredConnections(restored: restored, notRestored: pending.map(describe))
      state.outcome.withLock { $0 = report }
    }
    if thread == nil {
      state.outcome.withLock {
        $0 = RestoredConnections(restored: [], notRestored: connections.map(describe))
      }
    }
  }

  /// Seconds between attempts when no port-registration notice comes.
  static let retryInterval = 0.5

  /// What was restored and what was not, once the work is done (then `nil`).
  func takeReport() -> RestoredConnections? {
    state.outcome.withLock { report in
      defer { report = nil }
      return report
    }
  }

  /// Ends the attempts (the client stops) and waits for the thread;
  /// returns the connections it had still to make (none once it is done).
  func stop(wakingWith signal: EventSignal) -> [JackPortConnection] {
    state.stopRequested.store(true, ordering: .releasing)
    signal.signal()
    thread?.join()
    return state.unfinished.withLock { unfinished in
      defer { unfinished = [] }
      return unfinished
    }
  }
}
