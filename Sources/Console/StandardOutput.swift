import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Writes lines to standard output or standard error through C stdio, and
/// notices when standard output stops taking them (closed, a reader that
/// went away, a full disk). Used from the control thread only.
public enum StandardOutput {
  nonisolated(unsafe) private static let output = fdopen(STDOUT_FILENO, "w")
  nonisolated(unsafe) private static let error = fdopen(STDERR_FILENO, "w")
  /// Whether standard output was closed when the process started.
  nonisolated(unsafe) private static var wasClosed = false
  /// The errno of the first failed write to standard output; 0 while all is well.
  public static let failure = Atomic<Int32>(0)

  /// Puts /dev/null on any of descriptors 0, 1 and 2 that is closed, so a
  /// file the job opens can never take their place, and turns SIGPIPE into
  /// a failed write the job sees. Call first thing in `main`.
  public static func guardStandardDescriptors() {
    signal(SIGPIPE, SIG_IGN)
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO]
    where fcntl(descriptor, F_GETFD) == -1 {
      let null = open("/dev/null", O_RDWR)
      if null >= 0 && null != descriptor {
        dup2(null, descriptor)
        close(null)
      }
      if descriptor == STDOUT_FILENO { wasClosed = true }
    }
  }

  /// Writes `line` and a newline to standard output; flushes when asked
  /// (JSON Lines are flushed per line so a pipe sees each event at once).
  public static func write(_ line: String, flush: Bool = false) {
    guard usable else { return }
    check(fputs(line, output) >= 0 && fputc(0x0A, output) != EOF)
    if flush { Self.flush() }
  }

  /// Writes text to standard output as it is (no newline) and flushes.
  public static func writeRaw(_ text: String) {
    guard usable else { return }
    check(fputs(text, output) >= 0)
    flush()
  }

  /// Sends buffered output on its way.
  public static func flush() {
    guard usable else { return }
    check(fflush(output) == 0)
  }

  /// Columns of the terminal standard output writes to, or `nil` when it
  /// is not a terminal.
  public static func terminalColumns() -> Int? {
    var size = winsize()
    guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0,
      size.ws_col > 0
    else { return nil }
    return Int(size.ws_col)
  }

  /// Writes `line` and a newline to standard error, as one line: control
  /// characters (a newline in a file name) are shown escaped.
  public static func writeError(_ line: String) {
    flush()
    guard let error else { return }
    fputs(Self.oneLine(line) + "\n", error)
    fflush(error)
  }

  /// `text` with newlines, returns and other control characters escaped.
  public static func oneLine(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += " "
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F {
          result += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result
  }

  /// Whether standard output is a terminal.
  public static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

  /// What went wrong with standard output, in one line, or `nil`; `EPIPE`
  /// (the reader is gone, as with `| head`) is not reported.
  public static var failureMessage: String? {
    switch failure.load(ordering: .relaxed) {
    case 0, EPIPE: return nil
    case EBADF: return "standard output is closed; send it to a file or to /dev/null"
    case let code:
      return
        "cannot write to standard output: \(String(cString: strerror(code))); free some space or send the output elsewhere"
    }
  }

  /// Looks whether the reader of a pipe on standard output has gone, even
  /// while nothing is written (a live job that has decoded nothing yet,
  /// `| head -1`), and stops the job as a failed write would. Cheap: one
  /// poll with no wait; for the control loop of a long job.
  public static func checkReader() {
    var output = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
    if poll(&output, 1, 0) == 1 && output.revents & Int16(POLLERR) != 0 {
      var status = stat()
      // Only a pipe or socket says so; a terminal or file never loses its reader.
      if fstat(STDOUT_FILENO, &status) == 0
        && (status.st_mode & S_IFMT == S_IFIFO || status.st_mode & S_IFMT == S_IFSOCK)
      {
        record(EPIPE)
      }
    }
  }

  /// Whether the reader of standard output went away (a pipe closed early).
  public static var readerIsGone: Bool { failure.load(ordering: .relaxed) == EPIPE }

  private static var usable: Bool {
    if output == nil || wasClosed {
      record(EBADF)
      return false
    }
    return failure.load(ordering: .relaxed) == 0
  }

  private static func check(_ succeeded: Bool) {
    if !succeeded { record(errno == 0 ? EIO : errno) }
  }

  /// Remembers the first failure and asks the job to stop as Ctrl-C would:
  /// nobody reads what it produces any more.
  private static func record(_ code: Int32) {
    if failure.compareExchange(expected: 0, desired: code, ordering: .relaxed).exchanged {
      interruptRequested.store(true, ordering: .relaxed)
    }
  }
}
