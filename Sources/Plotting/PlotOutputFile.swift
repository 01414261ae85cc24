#if canImport(Glibc)
  import Glibc
#endif

/// Where a plot's bytes go: a temporary file next to the picture, renamed
/// onto it once every byte is written, so a failed plot (a full disk, a
/// file size limit) leaves nothing behind and an older picture of the same
/// name stays whole. A path that names a device or a FIFO is written as it
/// is. Keeps the last bytes written back until `commit`, so the SVG text
/// layer can go in before the closing tag. Calling thread.
final class PlotOutputFile {
  /// The picture's path as given.
  let path: String
  /// The file written to the end (the temporary file, or the path itself).
  private var descriptor: Int32
  /// The temporary file renamed onto `target` by `commit`, if any.
  private let temporary: String?
  private let target: String
  /// Bytes kept back from the end of the stream.
  private let tailLength: Int
  private(set) var tail: [UInt8] = []
  /// The error of the first write that failed.
  private(set) var failure: Int32?
  private var isFinished = false

  /// Bytes kept back for `commit` (the SVG's closing tag and a little more).
  static let svgTailLength = 64

  /// Opens the temporary file next to `path` (or `path` itself when it is a
  /// device or a FIFO).
  init(path: String, keepingBack tailLength: Int = 0) throws(PlotError) {
    self.path = path
    self.tailLength = tailLength
    var status = stat()
    if stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFREG {
      // A device or FIFO (/dev/stdout, /dev/full): nothing to rename onto.
      descriptor = open(path, O_WRONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        throw PlotError(description: Self.message(path: path, error: errno))
      }
      temporary = nil
      target = path
      return
    }
    // Through a symbolic link, the file it names is replaced.
    var linkStatus = stat()
    if lstat(path, &linkStatus) == 0 && linkStatus.st_mode & S_IFMT == S_IFLNK,
      let resolved = realpath(path, nil)
    {
      target = String(cString: resolved)
      free(resolved)
    } else {
      target = path
    }
    let directory = Self.directory(of: target)
    let name = target.split(separator: "/").last.map(String.init) ?? target
    var template = Array("\(directory)/.\(name).XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard created >= 0 else {
      throw PlotError(description: Self.message(path: path, error: errno))
    }
    descriptor = created
    _ = fcntl(created, F_SETFD, FD_CLOEXEC)
    temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    // The permissions a new file gets (mkstemp makes it private), or those
    // of the picture it replaces.
    let mask = umask(0)
    umask(mask)
    let mode = stat(target, &status) == 0 ? status.st_mode & 0o7777 : 0o666 & ~mask
    _ = fchmod(created, mode)
  }

  deinit { if !isFinished { discard() } }

  /// Appends `bytes`; false once a write has failed (see `failure`).
  @discardableResult
  func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard failure == nil else { return false }
    guard tailLength > 0 else { return writeAll(bytes) }
    tail.append(contentsOf: bytes)
    guard tail.count > tailLength else { return true }
    let flushed = tail.count - tailLength
    let written = tail.withUnsafeBytes {
      writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<flushed]))
    }
    tail.removeFirst(flushed)
    return written
  }

  private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let wrote = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      if wrote < 0 && errno == EINTR { continue }
      guard wrote > 0 else {
        failure = wrote < 0 ? errno : ENOSPC
        return false
      }
      offset += wrote
    }
    return true
  }

  /// Writes `ending` in place of the bytes kept back, closes the file and
  /// renames it onto the picture's path.
  func commit(ending: [UInt8]? = nil) throws(PlotError) {
    let last = ending ?? tail
    tail = []
    if failure == nil { last.withUnsafeBytes { _ = writeAll($0) } }
    if let failure { throw PlotError(description: Self.message(path: path, error: failure)) }
    isFinished = true
    let closed = close(descriptor)
    let closeError = errno
    guard closed == 0 || closeError == EINTR else {
      if let temporary { unlink(temporary) }
      throw PlotError(description: Self.message(path: path, error: closeError))
    }
    guard let temporary else { return }
    guard rename(temporary, target) == 0 else {
      let error = errno
      unlink(temporary)
      throw PlotError(description: Self.message(path: path, error: error))
    }
  }

  /// Closes and removes the temporary file: nothing of the plot is left.
  func discard() {
    guard !isFinished else { return }
    isFinished = true
    close(descriptor)
    if let temporary { unlink(temporary) }
  }

  /// The failure `failure` (or another error number) as one line: what
  /// happened to `path`, why, and what to do.
  static func message(path: String, error: Int32) -> String {
    let directory = directory(of: path)
    let reason = String(cString: strerror(error))
    switch error {
    case ENOENT:
      return
        "cannot write \(path): the directory \(directory) does not exist; create it or write the plot elsewhere"
    case ENOTDIR:
      return
        "cannot write \(path): part of \(directory) is not a directory; check the path or write the plot elsewhere"
    case EACCES, EPERM:
      return
        "cannot write \(path): \(directory) is not writable (\(reason)); write the plot to a directory you may write to"
    case EROFS:
      return
        "cannot write \(path): \(directory) is on a read-only file system; write the plot elsewhere"
    case ENOSPC, EDQUOT:
      return
        "cannot write \(path): no space left for it (\(reason)); free some space or write the plot to another disk"
    case EFBIG:
      return
        "cannot write \(path): the plot grew past the largest file allowed (\(reason)); raise the limit (ulimit -f) or make a smaller plot"
    case EISDIR:
      return "cannot write \(path): it is a directory; name a file inside it"
    default:
      return "cannot write \(path): \(reason); check the path and the disk"
    }
  }

  /// The directory a path is in ("." for a bare name).
  static func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }
}
