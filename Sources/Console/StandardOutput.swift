import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Writes lines to standard output or standard error through C stdio.
/// Used from the control thread only.
public enum StandardOutput {
  nonisolated(unsafe) private static let output = fdopen(STDOUT_FILENO, "w")
  nonisolated(unsafe) private static let error = fdopen(STDERR_FILENO, "w")

  /// Writes `line` and a newline to standard output; flushes when asked
  /// (JSON Lines are flushed per line so a pipe sees each event at once).
  public static func write(_ line: String, flush: Bool = false) {
    fputs(line, output)
    fputc(0x0A, output)
    if flush { fflush(output) }
  }

  /// Writes text to standard output as it is (no newline) and flushes.
  public static func writeRaw(_ text: String) {
    fputs(text, output)
    fflush(output)
  }

  /// Sends buffered output on its way.
  /// Columns of the terminal standard output writes to, or `nil` when it
  /// is not a terminal.
  public static func terminalColumns() -> Int? {
    var size = winsize()
    guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0,
      size.ws_col > 0
    else { return nil }
    return Int(size.ws_col)
  }

  public static func flush() { fflush(output) }

  /// Writes `line` and a newline to standard error.
  public static func writeError(_ line: String) {
    flush()
    fputs(line + "\n", error)
    fflush(error)
  }

  /// Whether standard output is a terminal.
  public static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
}
