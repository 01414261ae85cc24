import AudioFiles
import TextFormatting

#if canImport(Glibc)
  import Glibc
#endif

/// The files an earlier recording session left in a directory, as its
/// index lists them: the only files retention may ever delete besides the
/// running session's own. The index is read as untrusted text (another
/// program may have written it): it must begin as micloop begins its
/// indexes, every name must stay inside the directory and look like a
/// recording, only regular files count, and each must show it is micloop's
/// — a closed recording by its sidecar naming it and the session, an
/// unfinished one by its `bext` chunk. Control thread.
enum EndedSession {
  /// The largest index read; a longer one is read up to here.
  static let maximumIndexBytes = 256 * 1024 * 1024
  /// A longer line is skipped (micloop's lines are far shorter).
  static let maximumLineBytes = 1024 * 1024

  /// The closed recordings (with their sidecars) and the unfinished files
  /// a crash left that the index at `indexPath` lists and that are still
  /// there; `nil` when the session is still running (its index is locked)
  /// or the index cannot be read.
  static func files(indexPath: String, directory: String) -> [RecordingStore.Entry]? {
    let descriptor = open(indexPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    // A running session holds its index locked for as long as it runs.
    guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return nil }
    var listed = [String: String?]()
    var order = [String]()
    func list(_ name: String, sidecar: String?) {
      if listed[name] == nil { order.append(name) }
      listed[name] = .some(sidecar)
    }
    let indexName = String(indexPath.split(separator: "/").last ?? "")
    var isOwnIndex: Bool?
    forEachLine(descriptor) { line in
      let event = JSONValue(parsing: line)
      // micloop's indexes begin with the session's start, naming the index.
      if isOwnIndex == nil {
        isOwnIndex =
          event?["event"]?.string == "session_start" && event?["index"]?.string == indexName
      }
      guard isOwnIndex == true, let event, let kind = event["event"]?.string,
        let name = event["file"]?.string, isRecordingName(name)
      else { return }
      switch kind {
      case "open":
        list(name, sidecar: nil)
        list(name + RecordingFile.openingSuffix, sidecar: nil)
      case "recording":
        let sidecar = event["sidecar"]?.string.flatMap { isSidecarName($0) ? $0 : nil }
        list(name, sidecar: sidecar)
      case "deleted":
        listed[name] = nil
      default: break
      }
    }
    guard isOwnIndex == true else { return [] }
    return order.compactMap { name in
      guard case .some(let sidecarName) = listed[name] else { return nil }
      let audio = directory + "/" + name
      guard let status = RecordingFile.regularFileStatus(audio) else { return nil }
      let sidecar = sidecarName.map { directory + "/" + $0 }.flatMap {
        isSidecar($0, of: name, session: indexName) ? $0 : nil
      }
      guard sidecar != nil || hasOwnBroadcastChunk(audio) else { return nil }
      let bytes =
        RecordingFile.diskBytes(of: audio) + (sidecar.map { RecordingFile.diskBytes(of: $0) } ?? 0)
      return RecordingStore.Entry(
        audio: audio, sidecar: sidecar, bytes: bytes, modified: status.modified)
    }
  }

  /// Whether `name` is a path inside the directory (no leading `/`, no
  /// `.` or `..` step, no empty step) ending as micloop's recordings do.
  static func isRecordingName(_ name: String) -> Bool {
    guard isInside(name) else { return false }
    return RecordingContainer.allCases.contains { container in
      name.hasSuffix("." + container.fileExtension)
        || name.hasSuffix("." + container.fileExtension + RecordingFile.openingSuffix)
    }
  }

  static func isSidecarName(_ name: String) -> Bool { isInside(name) && name.hasSuffix(".json") }

  static func isInside(_ name: String) -> Bool {
    guard !name.isEmpty, !name.hasPrefix("/"), !name.utf8.contains(0) else { return false }
    return !name.split(separator: "/", omittingEmptySubsequences: false).contains {
      $0.isEmpty || $0 == "." || $0 == ".."
    }
  }

  /// The most bytes of a sidecar read.
  static let maximumSidecarBytes = 1024 * 1024

  /// Whether the JSON file at `path` is the sidecar micloop wrote for the
  /// recording `name` in the session whose index is `session`.
  static func isSidecar(_ path: String, of name: String, session: String) -> Bool {
    guard RecordingFile.regularFileStatus(path) != nil else { return false }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: maximumSidecarBytes)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
    guard count > 0, bytes.starts(with: SessionFiles.sidecarHead.utf8),
      let sidecar = JSONValue(parsing: String(decoding: bytes.prefix(count), as: UTF8.self))
    else { return false }
    return sidecar["file"]?.string == name && sidecar["session"]?.string == session
  }

  /// Whether the audio file at `path` carries micloop's `bext` chunk (an
  /// unfinished WAV a crash left has no sidecar to show it is micloop's).
  static func hasOwnBroadcastChunk(_ path: String) -> Bool {
    guard let reader = try? AudioFileReader(path: path) else { return false }
    return reader.broadcastInfo?.originator == SessionFiles.originator
  }

  /// Calls `body` with each whole line of the file (without its newline),
  /// up to `maximumIndexBytes`; overlong lines are skipped.
  static func forEachLine(_ descriptor: Int32, _ body: (String) -> Void) {
    var pending = [UInt8]()
    var skipping = false
    var total = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    while total < maximumIndexBytes {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
      guard count > 0 else { break }
      total += count
      var start = 0
      for position in 0..<count where chunk[position] == 0x0A {
        if !skipping {
          pending += chunk[start..<position]
          body(String(decoding: pending, as: UTF8.self))
        }
        pending.removeAll(keepingCapacity: true)
        skipping = false
        start = position + 1
      }
      if !skipping { pending += chunk[start..<count] }
      if pending.count > maximumLineBytes {
        pending.removeAll()
        skipping = true
      }
    }
  }
}
