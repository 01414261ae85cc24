import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Set by SIGINT, SIGTERM and SIGHUP, and when standard output fails; jobs
/// poll it and stop cleanly.
public let interruptRequested = Atomic<Bool>(false)

/// Turns Ctrl-C, SIGTERM and SIGHUP (the terminal closed) into a request to
/// stop (control thread).
public enum SignalTrap {
  /// Installs the handlers; a second Ctrl-C still ends the process at once.
  public static func install() {
    let handler: @convention(c) (Int32) -> Void = { signal in
      if interruptRequested.exchange(true, ordering: .relaxed) {
        // Second request: stop now (the recording's header is already valid).
        _exit(130)
      }
    }
    signal(SIGINT, handler)
    signal(SIGTERM, handler)
    signal(SIGHUP, handler)
    // A parent may start us with these blocked (the mask is inherited):
    // then they would stay pending and Ctrl-C would do nothing.
    var handled = sigset_t()
    sigemptyset(&handled)
    for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&handled, number) }
    pthread_sigmask(SIG_UNBLOCK, &handled, nil)
  }
}
