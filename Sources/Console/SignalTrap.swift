import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Set by SIGINT, SIGTERM and SIGHUP, and when standard output fails; jobs
/// poll it and stop cleanly.
public let interruptRequested = Atomic<Bool>(false)

/// Turns Ctrl-C, SIGTERM and SIGHUP (the terminal closed) into a request to
/// stop. Installed once, on the main thread, before a job starts.
public enum SignalTrap {
  /// Stop requests so far (each SIGINT, SIGTERM or SIGHUP counts).
  public static let requests = Atomic<Int>(0)
  /// Seconds a second stop request leaves the job to finish writing what it
  /// has before the process ends anyway (status 130). Two requests arrive
  /// together in ordinary use (a closed terminal's SIGHUP from the kernel
  /// and from the shell; Ctrl-C reaching `timeout` and micloop alike), so a
  /// second one must not cut the flush short — only bound it.
  public static let hurryGrace: UInt32 = 3

  /// Installs the handlers. The first request asks the job to stop; a
  /// later one gives it `hurryGrace` seconds more before the process ends.
  public static func install() {
    let handler: @convention(c) (Int32) -> Void = { _ in
      SignalTrap.requests.add(1, ordering: .relaxed)
      if interruptRequested.exchange(true, ordering: .relaxed) {
        // Async-signal-safe: the alarm's handler ends the process.
        alarm(SignalTrap.hurryGrace)
      }
    }
    let expired: @convention(c) (Int32) -> Void = { _ in _exit(130) }
    signal(SIGINT, handler)
    signal(SIGTERM, handler)
    signal(SIGHUP, handler)
    signal(SIGALRM, expired)
    // A parent may start us with these blocked (the mask is inherited):
    // then they would stay pending and Ctrl-C would do nothing.
    var handled = sigset_t()
    sigemptyset(&handled)
    for number in [SIGINT, SIGTERM, SIGHUP, SIGALRM] { sigaddset(&handled, number) }
    pthread_sigmask(SIG_UNBLOCK, &handled, nil)
  }
}
