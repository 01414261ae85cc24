#if canImport(Glibc)
  import Glibc
#endif

/// The session's JSON Lines index: one line per event, each written with
/// one `write` so a crash never leaves half a line, forced to disk at a
/// bounded cadence. Lines a full disk refused are kept and written when
/// space returns, in order. Control thread.
final class SessionIndex {
  let path: String
  /// Its name in the directory.
  let name: String
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

  /// Creates the index at `directory/prefix.jsonl`, or `prefix~2.jsonl`,
  /// `prefix~3.jsonl` … when another session took that name (each session
  /// has its own, made exclusively). It stays locked while the session runs:
  /// the lock, which ends with the process however it ends, tells another
  /// recorder in the directory that this session's files are not its own.
  init(directory: String, prefix: String) throws(RecorderError) {
    var attempt = 1
    while true {
      let name = prefix + (attempt == 1 ? "" : "~\(attempt)") + ".jsonl"
      let candidate = directory + "/" + name
      descriptor = open(
        candidate, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o644)
      if descriptor >= 0 {
        path = candidate
        self.name = name
        break
      }
      guard errno == EEXIST, attempt < RecordingFile.maximumAttempts else {
        throw .cannotCreate(path: candidate, reason: String(cString: strerror(errno)))
      }
      attempt += 1
    }
    flock(descriptor, LOCK_EX | LOCK_NB)
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
