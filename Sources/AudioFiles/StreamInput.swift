#if canImport(Glibc)
  import Glibc
#endif

/// Makes a descriptor that cannot seek (standard input, a pipe given as a
/// path, a FIFO) readable by libsndfile, which can stream a WAV from a pipe
/// but must seek in FLAC and most other containers.
///
/// A WAV (RIFF or RF64) keeps streaming: a relay thread hands libsndfile the
/// bytes looked at first and then the rest of the stream, so endless inputs
/// work. Anything else is copied to an anonymous temporary file first.
/// Called on the thread that opens the file.
enum StreamInput {
  /// A descriptor for the same bytes as `source` that libsndfile can read;
  /// `source` belongs to the returned descriptor's relay or is closed.
  static func readable(_ source: Int32, path: String) throws(AudioFileError) -> Int32 {
    var head = [UInt8](repeating: 0, count: 12)
    let headCount = readFully(source, into: &head)
    guard headCount > 0 else { throw .empty(path: path) }
    head.removeLast(head.count - headCount)
    let magic = String(decoding: head.prefix(4), as: UTF8.self)
    if magic == "RIFF" || magic == "RF64" {
      return try relay(source, after: head, path: path)
    }
    return try spool(source, after: head, path: path)
  }

  /// Reads until `buffer` is full or the stream ends; returns the count read.
  private static func readFully(_ descriptor: Int32, into buffer: inout [UInt8]) -> Int {
    var filled = 0
    while filled < buffer.count {
      let got = buffer.withUnsafeMutableBytes {
        read(descriptor, $0.baseAddress! + filled, $0.count - filled)
      }
      if got < 0 && errno == EINTR { continue }
      if got <= 0 { break }
      filled += got
    }
    return filled
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

  /// Copies `head` and then everything from `source` to `target`; false on
  /// a failed read or write.
  private static func copy(_ source: Int32, after head: [UInt8], to target: Int32) -> Bool {
    guard head.withUnsafeBytes({ writeAll(target, $0) }) else { return false }
    var block = [UInt8](repeating: 0, count: 65_536)
    while true {
      let got = block.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
      if got < 0 && errno == EINTR { continue }
      if got < 0 { return false }
      if got == 0 { return true }
      guard
        block.withUnsafeBytes({ writeAll(target, UnsafeRawBufferPointer(rebasing: $0[0..<got])) })
      else { return false }
    }
  }

  private static func spool(_ source: Int32, after head: [UInt8], path: String)
    throws(AudioFileError) -> Int32
  {
    defer { close(source) }
    guard let file = tmpfile() else {
      throw .readFailed(
        path: path, reason: "no temporary file: \(String(cString: strerror(errno)))")
    }
    let copy = dup(fileno(file))
    fclose(file)
    guard copy >= 0 else {
      throw .readFailed(path: path, reason: String(cString: strerror(errno)))
    }
    guard Self.copy(source, after: head, to: copy), lseek(copy, 0, SEEK_SET) == 0 else {
      let reason = String(cString: strerror(errno))
      close(copy)
      throw .readFailed(path: path, reason: reason)
    }
    return copy
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
