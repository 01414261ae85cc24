#if canImport(Glibc)
  import Glibc
#endif

/// A plain joinable thread for work beside the calling thread (reading a
/// file ahead of its analysis). Asynchronous signals stay with the other
/// threads, so the body's system calls are never interrupted by them.
/// Create and join it from the same (control) thread.
package final class BackgroundThread {
  private var thread = pthread_t()
  private var isJoined = false

  private final class Body {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
  }

  /// Starts `body` at once; `nil` when the system has no thread to give.
  package init?(_ body: @escaping () -> Void) {
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    let started = pthread_create(
      &thread, nil,
      { raw in
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGWINCH] { sigaddset(&blocked, signal) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
        return nil
      }, context)
    guard started == 0 else {
      Unmanaged<Body>.fromOpaque(context).release()
      return nil
    }
  }

  /// Waits for the body to return.
  package func join() {
    guard !isJoined else { return }
    pthread_join(thread, nil)
    isJoined = true
  }

  deinit { join() }
}
