internal import CSndFile

#if canImport(Glibc)
  import Glibc
#endif

/// Opens a descriptor that cannot seek (standard input, a pipe given as a
/// path, a FIFO, a character device) with libsndfile, by what its first
/// bytes say it is:
///
/// - WAV and RF64 stream: a relay thread hands libsndfile, reading a pipe,
///   the bytes looked at first and then the rest of the stream;
/// - FLAC and OGG stream through `ForwardStream` (libsndfile's virtual I/O);
/// - other containers libsndfile reads (AIFF, AU, CAF, W64, MP3 …) must be
///   whole before they are decoded: they are copied to an unnamed file in
///   `$TMPDIR` (or /tmp), at most `AudioFileReader.spoolLimit` bytes;
/// - anything else (zeros, text, headerless samples) is refused at once;
/// - headerless PCM described by the caller streams through `ForwardStream`.
///
/// Called on the thread that opens the file.
enum StreamInput {
  /// libsndfile's handle on the stream and what must live as long as it.
  struct Opened {
    var handle: OpaquePointer?
    /// Owner of the stream's descriptor while libsndfile reads it.
    var keeper: AnyObject?
  }

  /// Opens `source`, which from now on belongs to the result (or is
  /// closed); `path` names it in messages.
  static func open(
    _ source: Int32, path: String, raw: RawPCMFormat?, info: inout SF_INFO, spoolLimit: Int64
  ) throws(AudioFileError) -> Opened {
    if raw != nil {
      let stream = ForwardStream(descriptor: source, head: [], allowsShortReads: false)
      return Opened(handle: stream.open(&info), keeper: stream)
    }
    var head = [UInt8](repeating: 0, count: AudioContainer.signatureLength)
    let headCount = readFully(source, into: &head, from: 0)
    head.removeLast(head.count - headCount)
    guard headCount > 0 else {
      close(source)
      if StreamStop.didStop.load(ordering: .relaxed) { throw .stoppedBeforeAudio(path: path) }
      throw .empty(path: path)
    }
    guard let container = AudioContainer.identify(head) else {
      close(source)
      throw .notAudio(
        path: path,
        reason:
          "no audio header; it starts \(hexadecimal(head.prefix(8)))")
    }
    switch container.streaming {
    case .pipe:
      try refuseUndecodedEncoding(source, head: &head, path: path)
      let readable = try relay(source, after: head, path: path)
      return Opened(handle: sf_open_fd(readable, Int32(SFM_READ), &info, 1), keeper: nil)
    case .forward:
      let stream = ForwardStream(descriptor: source, head: head, allowsShortReads: true)
      return Opened(handle: stream.open(&info), keeper: stream)
    case .spool:
      let readable = try spool(
        source, after: head, container: container.name, path: path, limit: spoolLimit)
      return Opened(handle: sf_open_fd(readable, Int32(SFM_READ), &info, 1), keeper: nil)
    }
  }

  /// "00 00 1a ff …": bytes as a message shows them.
  static func hexadecimal(_ bytes: ArraySlice<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    return bytes.map { "\(digits[Int($0 >> 4)])\(digits[Int($0 & 15)])" }.joined(separator: " ")
      + " …"
  }

  /// Reads on in `head` until the WAV's encoding is known; throws when it is
  /// one micloop refuses (see `WAVEncodingCheck`).
  private static func refuseUndecodedEncoding(
    _ source: Int32, head: inout [UInt8], path: String
  ) throws(AudioFileError) {
    while case .needsBytes(let count) = WAVEncodingCheck.formatTag(in: head) {
      let had = head.count
      head += [UInt8](repeating: 0, count: count - had)
      let got = readFully(source, into: &head, from: had)
      head.removeLast(head.count - had - got)
      if had + got < count { return }
    }
    if case .tag(let tag) = WAVEncodingCheck.formatTag(in: head), WAVEncodingCheck.isRefused(tag) {
      close(source)
      throw .unsupportedEncoding(path: path, name: WAVEncodingCheck.name(of: tag))
    }
  }

  /// Reads until `buffer` is full from `start` on or the stream ends;
  /// returns the count read.
  private static func readFully(_ descriptor: Int32, into buffer: inout [UInt8], from start: Int)
    -> Int
  {
    var filled = start
    while filled < buffer.count {
      let got = buffer.withUnsafeMutableBytes {
        StreamStop.read(descriptor, $0.baseAddress! + filled, $0.count - filled)
      }
      if got <= 0 { break }
      filled += got
    }
    return filled - start
  }

  private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let wrote = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      if wrote < 0 && errno == EINTR { continue }
      if wrote <= 0 { return false }
      offset += wrote
    }
    return true
  }

  /// How a copy ended.
  private enum CopyEnding {
    case finished
    case readFailed(Int32)
    case writeFailed(Int32)
    case passedLimit
  }

  /// Copies `head` and then everything from `source` to `target`, stopping
  /// once more than `limit` bytes were copied.
  private static func copy(
    _ source: Int32, after head: [UInt8], to target: Int32, limit: Int64 = .max
  ) -> CopyEnding {
    guard head.withUnsafeBytes({ writeAll(target, $0) }) else { return .writeFailed(errno) }
    var total = Int64(head.count)
    var block = [UInt8](repeating: 0, count: 65_536)
    while true {
      let got = block.withUnsafeMutableBytes {
        StreamStop.read(source, $0.baseAddress!, $0.count)
      }
      if got < 0 { return .readFailed(errno) }
      if got == 0 { return .finished }
      total += Int64(got)
      if total > limit { return .passedLimit }
      guard
        block.withUnsafeBytes({ writeAll(target, UnsafeRawBufferPointer(rebasing: $0[0..<got])) })
      else { return .writeFailed(errno) }
    }
  }

  /// Where a stream is held: `$TMPDIR`, or /tmp when it is not set.
  static var temporaryDirectory: String {
    if let value = getenv("TMPDIR"), value.pointee != 0 {
      var directory = String(cString: value)
      while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
      return directory
    }
    return "/tmp"
  }

  /// Copies the stream to an unnamed file in `temporaryDirectory` and
  /// returns it, read from the start.
  private static func spool(
    _ source: Int32, after head: [UInt8], container: String, path: String, limit: Int64
  ) throws(AudioFileError) -> Int32 {
    defer { close(source) }
    let directory = temporaryDirectory
    var template = Array("\(directory)/micloop-stream-XXXXXX".utf8CString)
    let held = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard held >= 0 else {
      throw .cannotHoldStream(
        path: path, container: container, directory: directory,
        reason: String(cString: strerror(errno)))
    }
    // Unnamed from the start: nothing is left behind, however the job ends.
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    _ = fcntl(held, F_SETFD, FD_CLOEXEC)
    let ending = copy(source, after: head, to: held, limit: limit)
    switch ending {
    case .finished:
      guard lseek(held, 0, SEEK_SET) == 0 else {
        let reason = String(cString: strerror(errno))
        close(held)
        throw .readFailed(path: path, reason: reason)
      }
      return held
    case .passedLimit:
      close(held)
      throw .streamTooLongToHold(path: path, container: container, limit: limit)
    case .readFailed(let code):
      close(held)
      throw .readFailed(path: path, reason: String(cString: strerror(code)))
    case .writeFailed(let code):
      close(held)
      throw .cannotHoldStream(
        path: path, container: container, directory: directory,
        reason: String(cString: strerror(code)))
    }
  }

  private final class Relay {
    let source: Int32
    let head: [UInt8]
    let target: Int32
    init(source: Int32, head: [UInt8], target: Int32) {
      self.source = source
      self.head = head
      self.target = target
    }
  }

  private static func relay(_ source: Int32, after head: [UInt8], path: String)
    throws(AudioFileError) -> Int32
  {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else {
      close(source)
      throw .readFailed(path: path, reason: String(cString: strerror(errno)))
    }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    let context = Unmanaged.passRetained(Relay(source: source, head: head, target: ends[1]))
    var thread = pthread_t()
    let started = pthread_create(
      &thread, nil,
      { raw in
        let relay = Unmanaged<Relay>.fromOpaque(raw!).takeRetainedValue()
        // A write to a pipe whose reader left raises SIGPIPE in the writing
        // thread: keep it blocked here so the write fails with EPIPE instead.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // A reader that stops early closes its end; the copy then ends on EPIPE.
        _ = StreamInput.copy(relay.source, after: relay.head, to: relay.target)
        close(relay.target)
        close(relay.source)
        return nil
      }, context.toOpaque())
    guard started == 0 else {
      context.release()
      close(ends[0])
      close(ends[1])
      close(source)
      throw .readFailed(path: path, reason: "cannot start a reader thread")
    }
    pthread_detach(thread)
    return ends[0]
  }
}
