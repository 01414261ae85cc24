#if canImport(Glibc)
  import Glibc
#endif

/// What the recordings take on disk, and the retention rules
/// (`RetentionPolicy`): deletes the oldest closed recordings — never the
/// open one — to stay under a byte budget or keep space free, and those
/// past an age. It deletes only what micloop wrote and listed: this
/// session's closed recordings, and those the index of an earlier session
/// that has ended lists (with the unfinished `.part` files a crash left).
/// Files of a session still running (another recorder in the same
/// directory), files no index lists and anything below the directory that
/// no index names are never touched, nor counted. Control thread.
final class RecordingStore {
  /// A closed recording (or an unfinished one left by a crash).
  struct Entry {
    var audio: String
    var sidecar: String?
    var bytes: Int64
    /// When it was last written (seconds since 1970).
    var modified: Double
  }

  /// Why room could not be made.
  enum Shortage: Equatable {
    case maximumBytes
    case minimumFree
    case diskFull
  }

  let directory: String
  let policy: RetentionPolicy
  /// Bytes always left free so the index and sidecars can still be written.
  static let reserve: Int64 = 256 * 1024
  private var closed: [Entry] = []
  /// Bytes of session indexes (never deleted for the budget).
  private var indexBytes: Int64 = 0
  private var indexes: [Entry] = []
  /// Bytes of the file being written and of this session's index.
  var openBytes: Int64 = 0
  var sessionIndexBytes: Int64 = 0
  /// The session's own index, which age never deletes.
  var sessionIndexPath = ""

  init(directory: String, policy: RetentionPolicy) {
    self.directory = directory
    self.policy = policy
    scan()
    closed.sort { $0.modified < $1.modified }
  }

  /// Bytes counted against the budget.
  var usage: Int64 {
    closed.reduce(0) { $0 + $1.bytes } + indexBytes + openBytes + sessionIndexBytes
  }

  /// Closed recordings known.
  var closedCount: Int { closed.count }

  /// Notes a recording just closed.
  func add(audio: String, sidecar: String?) {
    let bytes =
      RecordingFile.diskBytes(of: audio) + (sidecar.map { RecordingFile.diskBytes(of: $0) } ?? 0)
    closed.append(Entry(audio: audio, sidecar: sidecar, bytes: bytes, modified: SystemClock.now))
  }

  /// Bytes the file system lets us write (`nil` when it cannot tell).
  func freeBytes() -> Int64? {
    var info = statvfs()
    guard statvfs(directory, &info) == 0 else { return nil }
    return Int64(info.f_bavail) * Int64(info.f_frsize)
  }

  /// Whether the policy allows deleting recordings to make room (a byte
  /// budget or a free-space floor was asked for); without one a full disk
  /// deletes nothing and recording waits for space.
  var deletesForRoom: Bool { policy.maximumBytes != nil || policy.minimumFree != nil }

  /// Deletes the oldest closed recordings until `bytes` more fit in the
  /// budget and on the disk (only when the policy allows deleting).
  /// Returns what it deleted and why, and the shortage left when deleting
  /// everything closed was not enough (or deleting is not allowed).
  func makeRoom(for bytes: Int64) -> (
    deleted: [(entry: Entry, reason: Shortage)], shortage: Shortage?
  ) {
    var deleted = [(entry: Entry, reason: Shortage)]()
    while true {
      guard let shortage = shortage(for: bytes) else { return (deleted, nil) }
      // A full disk that deleting cannot help (nothing of ours on it), or
      // that the user did not allow us to clear.
      guard deletesForRoom, !closed.isEmpty else { return (deleted, shortage) }
      let oldest = closed.removeFirst()
      remove(oldest)
      deleted.append((oldest, shortage))
    }
  }

  /// What stands in the way of writing `bytes` more, if anything.
  private func shortage(for bytes: Int64) -> Shortage? {
    if let maximum = policy.maximumBytes, usage + bytes > maximum { return .maximumBytes }
    guard let free = freeBytes() else { return nil }
    if let minimum = policy.minimumFree, free - bytes < minimum { return .minimumFree }
    if free - bytes < Self.reserve { return .diskFull }
    return nil
  }

  /// Deletes closed recordings (and old indexes) last written more than
  /// the policy's age ago.
  func expire(now: Double) -> [Entry] {
    guard let age = policy.maximumAge else { return [] }
    var deleted = [Entry]()
    while let oldest = closed.first, now - oldest.modified > age {
      closed.removeFirst()
      remove(oldest)
      deleted.append(oldest)
    }
    indexes.removeAll { index in
      guard now - index.modified > age, index.audio != sessionIndexPath else { return false }
      unlink(index.audio)
      indexBytes -= index.bytes
      deleted.append(index)
      return true
    }
    return deleted
  }

  private func remove(_ entry: Entry) {
    unlink(entry.audio)
    if let sidecar = entry.sidecar { unlink(sidecar) }
    // A dated subdirectory left empty goes too (never the directory itself).
    var parent = entry.audio
    while let slash = parent.lastIndex(of: "/") {
      parent = String(parent[..<slash])
      guard parent.count > directory.count, rmdir(parent) == 0 else { break }
    }
  }

  /// Finds the indexes of earlier sessions in the directory (never below
  /// it) and, for each session that has ended, the recordings its index
  /// lists. A session still running holds a lock on its index: its files,
  /// open or closed, are another recorder's and are left alone.
  private func scan() {
    guard let handle = opendir(directory) else { return }
    var names = [String]()
    while let entry = readdir(handle) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name.hasPrefix(SessionFiles.indexPrefix) && name.hasSuffix(".jsonl") { names.append(name) }
    }
    closedir(handle)
    var known = Set<String>()
    for name in names.sorted() {
      let path = directory + "/" + name
      guard let status = RecordingFile.regularFileStatus(path),
        let listed = EndedSession.files(indexPath: path, directory: directory)
      else { continue }
      let bytes = RecordingFile.diskBytes(of: path)
      indexes.append(Entry(audio: path, sidecar: nil, bytes: bytes, modified: status.modified))
      indexBytes += bytes
      for file in listed where known.insert(file.audio).inserted { closed.append(file) }
    }
  }
}

/// Names the recorder gives its own files.
enum SessionFiles {
  /// Session indexes are `session-<start>.jsonl` in the recording directory.
  static let indexPrefix = "session-"
  /// Every sidecar begins with this, so retention recognises its own.
  static let sidecarHead = "{\"recorder\":\"micloop\""
  /// The originator of every recording's `bext` chunk.
  static let originator = "micloop"
}
