#if canImport(Glibc)
  import DuplexIO
  import Glibc
#endif

/// The session's JSON Lines index: one line per event, each written with
/// one `write` so a crash never leaves half a line, forced to disk at a
/// bounded cadence. Lines a full disk refused are kept and written when
/// space returns, in order. Control thread.
final class SessionIndex {
  let path: String
  private var descriptor: Int32
  /// Lines not yet written (the disk refused them).
  private var pending: [String] = []
  /// The most lines held while the disk refuses them.
  static let pendingLimit = 100_000
  private var lastSync = MonotonicClock.seconds
  private var isDirty = false
  /// Bytes written so far.
  private(set) var bytes: Int64 = 0
  /// Lines dropped because too many waited (reported once).
  private(set) var droppedLines = 0

  /// Creates the index (failing if it exists: each session has its own).
  init(path: String) throws(RecorderError) {
    self.path = path
    descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
    }
  }

  deinit { close() }

  /// Appends `line` (a JSON object without its newline).
  func append(_ line: String) {
    if pending.count >= Self.pendingLimit {
      pending.removeFirst()
      droppedLines += 1
    }
    pending.append(line)
    flushPending()
  }

  /// Writes what waits; true when nothing is left.
  @discardableResult
  func flushPending() -> Bool {
    guard descriptor >= 0 else { return pending.isEmpty }
    while let line = pending.first {
      let bytes = Array((line + "\n").utf8)
      let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
      if written == bytes.count {
        pending.removeFirst()
        self.bytes += Int64(written)
        isDirty = true
        continue
      }
      if written > 0 {
        // A short write on a full disk: take the piece back so the line stays whole.
        _ = ftruncate(descriptor, off_t(self.bytes))
      }
      return false
    }
    return true
  }

  /// Lines waiting for the disk.
  var waitingLines: Int { pending.count }

  /// Forces the index to disk when `interval` seconds have passed.
  func syncIfDue(interval: Double) {
    let now = MonotonicClock.seconds
    guard isDirty, now - lastSync >= interval, descriptor >= 0 else { return }
    fdatasync(descriptor)
    isDirty = false
    lastSync = now
  }

  func close() {
    guard descriptor >= 0 else { return }
    flushPending()
    fdatasync(descriptor)
    Glibc.close(descriptor)
    descriptor = -1
  }
}
