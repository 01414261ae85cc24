#if canImport(Glibc)
  import Glibc
#endif

/// A joinable POSIX thread: the audio loop (with SCHED_FIFO when the process
/// may use it) or the unit's stop watcher (plain). Created and joined on the
/// control thread.
final class RealtimeThread {
  private var thread = pthread_t()
  private var isJoined = false
  /// Whether the thread got real-time priority.
  let isRealtime: Bool

  private final class Box {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
  }

  /// Starts `body` on a new thread; real-time at `priority` when permitted.
  init(realtimePriority priority: Int32?, body: @escaping () -> Void) throws(DuplexError) {
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
      let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
      box.body()
      return nil
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    var realtime = false
    if let priority {
      var parameters = sched_param()
      parameters.sched_priority = priority
      pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
      pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
      pthread_attr_setschedparam(&attributes, &parameters)
      realtime = pthread_create(&thread, &attributes, entry, box) == 0
    }
    if !realtime {
      var plain = pthread_attr_t()
      pthread_attr_init(&plain)
      defer { pthread_attr_destroy(&plain) }
      let result = pthread_create(&thread, &plain, entry, box)
      guard result == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        throw DuplexError(
          .threadUnavailable, operation: "start the audio thread", device: "", code: result)
      }
    }
    isRealtime = realtime
  }

  /// Whether the calling thread is this one.
  var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

  /// Waits for the thread to finish.
  func join() {
    guard !isJoined else { return }
    pthread_join(thread, nil)
    isJoined = true
  }

  /// Lets the thread run on unjoined (stuck in a driver, or the caller itself).
  func detach() {
    guard !isJoined else { return }
    pthread_detach(thread)
    isJoined = true
  }

  deinit { join() }
}

/// Locks the process's pages in memory so the audio thread never waits for
/// a page fault; returns false when not permitted.
func lockMemory() -> Bool {
  mlockall(MCL_CURRENT | MCL_FUTURE) == 0
}

/// Runs `body` with the calling thread raised to SCHED_FIFO at `priority`
/// (when permitted), then restores its policy. Threads that `body` creates
/// inherit the priority: ALSA plugins start their own I/O threads (pulse's
/// mainloop, PipeWire's data loop) while a device is opened, and those
/// threads move the audio the real-time loop waits for.
func withRealtimePriority<Result, Failure: Error>(
  _ priority: Int32?, _ body: () throws(Failure) -> Result
) throws(Failure) -> Result {
  guard let priority else { return try body() }
  let thread = pthread_self()
  var policy: Int32 = 0
  var saved = sched_param()
  guard pthread_getschedparam(thread, &policy, &saved) == 0 else { return try body() }
  var raised = sched_param()
  raised.sched_priority = priority
  let isRaised = pthread_setschedparam(thread, SCHED_FIFO, &raised) == 0
  defer { if isRaised { pthread_setschedparam(thread, policy, &saved) } }
  return try body()
}
