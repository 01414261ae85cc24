import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Lets a program end the reading of streams that wait for data (a silent
/// pipe, a squelched receiver's output) when it is asked to stop: every
/// blocking read of a stream goes through `read`, which waits in short
/// polls and ends the stream, as if it had closed, once `shouldStop` says
/// so. What was read before stays; a stream ended this way is not called
/// truncated. Any thread.
public enum StreamStop {
  /// How long one wait lasts before the stop is asked again.
  static let pollMilliseconds: Int32 = 100
  nonisolated(unsafe) private static var shouldStop: (@Sendable () -> Bool)?
  /// Whether a stream read was ended by a stop request.
  static let didStop = Atomic<Bool>(false)

  /// Installs the question asked while a stream waits (once, before any
  /// file is opened).
  public static func install(_ shouldStop: @escaping @Sendable () -> Bool) {
    Self.shouldStop = shouldStop
  }

  /// `read(2)` of `descriptor` that returns 0 (end of stream) once a stop
  /// is requested while it waits; EINTR is retried.
  static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    while true {
      if let shouldStop, shouldStop() {
        didStop.store(true, ordering: .relaxed)
        return 0
      }
      var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let ready = poll(&waiting, 1, shouldStop == nil ? -1 : pollMilliseconds)
      if ready < 0 && errno != EINTR { return -1 }
      if ready <= 0 { continue }
      let got = Glibc.read(descriptor, buffer, count)
      if got < 0 && errno == EINTR { continue }
      return got
    }
  }
}
