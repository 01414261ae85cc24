import AudioFiles

#if canImport(Glibc)
  import Glibc
#endif

/// One file being recorded: written as `NAME.part.EXT` through
/// `AudioFileWriter` (header true after every block, a `bext` chunk with the
/// first sample's time), forced to disk at a bounded cadence, closed, and
/// renamed to `NAME.EXT` once its sidecar is written. Until its first block
/// is written it is `NAME.part.EXT.opening`: a process killed while the
/// header was being made, or before any audio, leaves no `.part` file that
/// is not a whole one. Control thread.
final class RecordingFile {
  /// The name relative to the recording directory, without extension.
  let name: String
  let fileExtension: String
  let directory: String
  /// The timeline frame of its first sample.
  let startFrame: Int64
  /// The wall-clock time of its first sample (seconds since 1970) as
  /// estimated when it opened: its name, its `bext` chunk and its index
  /// line all say this, even if the live clock's estimate moves later.
  let startTime: Double
  private var writer: AudioFileWriter?
  private var lastSync = MonotonicClock.seconds
  private let bytesPerFrame: Int
  /// Frames written.
  private(set) var frames: Int64 = 0
  /// Whether the file still has its opening name (no block written yet).
  private var isOpening = true
  /// Whether its sidecar is written (under its final name).
  private(set) var hasSidecar = false

  var partPath: String { directory + "/" + name + ".part." + fileExtension }
  /// Where the file is until its first block is written.
  var openingPath: String { partPath + Self.openingSuffix }
  /// Ends the name of a file that has not had its first block yet.
  static let openingSuffix = ".opening"
  var finalPath: String { directory + "/" + name + "." + fileExtension }
  var sidecarPath: String { directory + "/" + name + ".json" }
  var fileName: String { name + "." + fileExtension }
  var sidecarName: String { name + ".json" }

  /// Opens a new file named `base`, or `base-2`, `base-3` … when that name
  /// is taken, in any of its forms, by a file of anyone's: the name is
  /// taken atomically (the opening file is created exclusively), so two
  /// recorders in one directory never share or replace a file.
  init(
    directory: String, base: String, fileExtension: String, startFrame: Int64, startTime: Double,
    sampleRate: Double, channelCount: Int, encoding: AudioFileEncoding, broadcast: BroadcastInfo
  ) throws(AudioFileError) {
    self.directory = directory
    self.fileExtension = fileExtension
    self.startFrame = startFrame
    self.startTime = startTime
    let sampleBytes =
      switch encoding {
      case .pcm16: 2
      case .pcm24: 3
      case .pcm32, .float: 4
      }
    bytesPerFrame = sampleBytes * channelCount
    Self.makeParent(of: directory + "/" + base)
    name = try Self.reserveName(directory: directory, base: base, fileExtension: fileExtension)
    let part = directory + "/" + name + ".part." + fileExtension
    do {
      writer = try AudioFileWriter(
        path: part + Self.openingSuffix, sampleRate: sampleRate, channelCount: channelCount,
        encoding: encoding, broadcast: broadcast, typeName: part)
    } catch {
      unlink(part + Self.openingSuffix)
      throw error
    }
  }

  /// The most names tried before giving up (`base-2` … `base-10000`).
  static let maximumAttempts = 10_000

  /// Takes the first free name of `base`, `base-2` … by creating its
  /// opening file exclusively, then making sure no file of that name
  /// exists in a later form (`.part`, the sidecar, the final name: looked
  /// at in the order a recording passes through them, so one that moves
  /// on meanwhile is still seen).
  static func reserveName(directory: String, base: String, fileExtension: String)
    throws(AudioFileError) -> String
  {
    for attempt in 1...maximumAttempts {
      let name = attempt == 1 ? base : base + "-\(attempt)"
      let stem = directory + "/" + name
      let opening = stem + ".part." + fileExtension + openingSuffix
      let descriptor = open(opening, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
      guard descriptor >= 0 else {
        if errno == EEXIST { continue }
        throw .cannotCreate(path: opening, reason: String(cString: strerror(errno)))
      }
      close(descriptor)
      let later = [stem + ".part." + fileExtension, stem + ".json", stem + "." + fileExtension]
      if later.contains(where: { access($0, F_OK) == 0 || isSymbolicLink($0) }) {
        unlink(opening)
        continue
      }
      return name
    }
    throw .cannotCreate(
      path: directory + "/" + base, reason: "\(maximumAttempts) files of that name exist already")
  }

  static func isSymbolicLink(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
  }

  /// Gives the file at `source` the name `target` only if no file has
  /// that name (a hard link, then the old name removed); on a file system
  /// without hard links, a rename once `target` is seen free. Returns
  /// `errno` on failure (`EEXIST`: the name is taken).
  static func moveWithoutReplacing(_ source: String, to target: String) -> Int32? {
    if link(source, target) == 0 {
      unlink(source)
      return nil
    }
    let failure = errno
    guard failure == EPERM || failure == EXDEV || failure == ENOTSUP || failure == EMLINK
    else { return failure }
    guard access(target, F_OK) != 0, !isSymbolicLink(target) else { return EEXIST }
    return rename(source, target) == 0 ? nil : errno
  }

  /// The modification time of the regular file at `path` (not following a
  /// symbolic link), or `nil` when it is not one.
  static func regularFileStatus(_ path: String) -> (modified: Double, size: Int64)? {
    var status = stat()
    guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
    return (
      Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9, Int64(status.st_size)
    )
  }

  /// Bytes `frames` more frames add at most.
  func bytes(forFrames frames: Int64) -> Int64 { frames * Int64(bytesPerFrame) }

  /// Appends frames; a failure leaves the file valid up to `frames`.
  func write(_ samples: UnsafePointer<Float>, frameCount: Int) throws(AudioFileError) {
    guard let writer else { throw .writeFailed(path: partPath, reason: "the file is closed") }
    defer { frames = writer.framesWritten }
    try writer.write(samples, frameCount: frameCount)
    // Its header now counts a block: the file takes its `.part` name.
    if isOpening && writer.framesWritten > 0 {
      if let failure = Self.moveWithoutReplacing(openingPath, to: partPath) {
        throw .writeFailed(path: partPath, reason: String(cString: strerror(failure)))
      }
      isOpening = false
    }
  }

  /// Forces the data to disk when `interval` seconds have passed since the last time.
  func syncIfDue(interval: Double) {
    let now = MonotonicClock.seconds
    guard now - lastSync >= interval else { return }
    writer?.sync()
    lastSync = now
  }

  /// Finishes the audio (its header final); the file keeps its `.part` name.
  func closeAudio() {
    writer?.close()
    writer = nil
  }

  /// The bytes the file takes on disk now.
  var diskBytes: Int64 {
    Self.diskBytes(of: isOpening ? openingPath : writer == nil ? finalOrPart : partPath)
  }

  private var finalOrPart: String {
    access(finalPath, F_OK) == 0 ? finalPath : partPath
  }

  /// Writes the sidecar, then gives the audio its final name; neither
  /// replaces a file. Returns the problem when the disk refused (the file
  /// keeps `.part`; a later call tries again).
  func publish(sidecar: String) -> String? {
    if !hasSidecar {
      let temporary = sidecarPath + ".tmp"
      let descriptor = open(
        temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
      guard descriptor >= 0 else { return String(cString: strerror(errno)) }
      let bytes = Array((sidecar + "\n").utf8)
      let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
      let failure = written == bytes.count ? nil : String(cString: strerror(errno))
      if failure == nil { fdatasync(descriptor) }
      close(descriptor)
      if let failure {
        unlink(temporary)
        return failure.isEmpty ? "short write" : failure
      }
      if let failure = Self.moveWithoutReplacing(temporary, to: sidecarPath) {
        unlink(temporary)
        return String(cString: strerror(failure))
      }
      hasSidecar = true
    }
    if let failure = Self.moveWithoutReplacing(partPath, to: finalPath) {
      return String(cString: strerror(failure))
    }
    Self.syncDirectory(of: finalPath)
    return nil
  }

  /// Removes the file (one that never got a frame).
  func discard() {
    closeAudio()
    unlink(isOpening ? openingPath : partPath)
  }

  /// Bytes a file takes on disk (its blocks), 0 when missing.
  static func diskBytes(of path: String) -> Int64 {
    var status = stat()
    guard stat(path, &status) == 0 else { return 0 }
    return max(Int64(status.st_blocks) * 512, roundedUp(Int64(status.st_size)))
  }

  /// `bytes` rounded up to whole 4 KiB blocks, as file systems allocate.
  static func roundedUp(_ bytes: Int64) -> Int64 { (bytes + 4095) / 4096 * 4096 }

  /// Makes the directories above `path` (a template may hold `/`);
  /// returns the `errno` of the first one that could not be made.
  @discardableResult
  static func makeParent(of path: String) -> Int32? {
    var prefix = ""
    var failure: Int32?
    for (index, component) in path.split(separator: "/", omittingEmptySubsequences: false)
      .dropLast().enumerated()
    {
      prefix += (index == 0 ? "" : "/") + component
      if !prefix.isEmpty, mkdir(prefix, 0o755) != 0, errno != EEXIST, failure == nil {
        failure = errno
      }
    }
    return failure
  }

  /// Makes a rename durable (`fsync` of the directory).
  static func syncDirectory(of path: String) {
    let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
      .joined(separator: "/")
    let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
  }
}
