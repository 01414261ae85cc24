/// Why the station stopped serving a client.
enum ClientDrop: Error {
  /// The client did not take what was sent within the write timeout.
  case timedOut
  /// The client fell further behind the feed than its queue allows.
  case queueFull
}

/// Runs `operation` (a socket read or write) but gives up on it after
/// `seconds`, or as soon as `abandon` turns true (looked at every
/// `interval`): the operation's task is cancelled, which wakes a socket
/// suspended in the pool. Server tasks only.
func withDeadline<T: Sendable>(
  seconds: Double, interval: Double = 0.05, abandon: @escaping @Sendable () -> Bool = { false },
  _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
  try await withThrowingTaskGroup(of: T?.self) { group in
    group.addTask { try await operation() }
    group.addTask {
      let end = ContinuousClock.now + .seconds(seconds)
      while ContinuousClock.now < end {
        if abandon() { throw ClientDrop.queueFull }
        try await Task.sleep(for: .seconds(interval))
      }
      throw ClientDrop.timedOut
    }
    defer { group.cancelAll() }
    guard let first = try await group.next(), let value = first else {
      throw CancellationError()
    }
    return value
  }
}
