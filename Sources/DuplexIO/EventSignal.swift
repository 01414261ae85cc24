internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

/// A one-shot signal between threads on an eventfd: `signal` is a single
/// `write` (safe on the audio thread: no allocation, no lock), and it stays
/// raised for every waiter until `reset`. Created on the control thread.
final class EventSignal: @unchecked Sendable {
  private let descriptor: Int32

  init() {
    descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
  }

  deinit { Glibc.close(descriptor) }

  /// Raises the signal (any thread).
  func signal() {
    var one: UInt64 = 1
    _ = Glibc.write(descriptor, &one, 8)
  }

  /// Lowers the signal (control thread, before the next use).
  func reset() {
    var value: UInt64 = 0
    _ = Glibc.read(descriptor, &value, 8)
  }

  /// Waits until the signal is raised; false when `timeout` seconds pass
  /// first. A `nil` timeout waits for ever.
  func wait(timeout: Double?) -> Bool {
    var descriptors = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    let deadline = timeout.map { MonotonicClock.now() + UInt64(max(0, $0) * 1e9) }
    while true {
      var milliseconds: Int32 = -1
      if let deadline {
        let now = MonotonicClock.now()
        milliseconds = now >= deadline ? 0 : Int32(min(1e9, Double(deadline - now) / 1e6 + 0.999))
      }
      let result = poll(&descriptors, 1, milliseconds)
      if result > 0 { return true }
      if result == 0 { return false }
      if errno != EINTR { return false }
    }
  }

  /// Whether the signal is raised now.
  var isRaised: Bool { wait(timeout: 0) }
}
