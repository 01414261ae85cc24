#if canImport(Glibc)
  import Glibc
#endif

/// What kind of thing an `--input` path names, for choices that depend on
/// whether the audio arrives at its own pace. Any thread.
enum InputKind {
  /// Whether `path` is standard input, a pipe, a FIFO, a socket or a
  /// character device: audio that arrives over time rather than a file read
  /// as fast as the disk allows.
  static func isStream(_ path: String) -> Bool {
    var status = stat()
    guard path != "-" else { return fstat(STDIN_FILENO, &status) != 0 || !isRegular(status) }
    return stat(path, &status) == 0 && !isRegular(status)
  }

  private static func isRegular(_ status: stat) -> Bool { status.st_mode & S_IFMT == S_IFREG }
}
