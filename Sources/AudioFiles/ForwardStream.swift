internal import CSndFile

#if canImport(Glibc)
  import Glibc
#endif

/// A descriptor that cannot seek (a pipe, a FIFO, a terminal, a character
/// device such as /dev/zero) offered to libsndfile through its virtual I/O
/// (`sf_open_virtual`), so that FLAC, OGG and headerless PCM are decoded as
/// they arrive and an endless stream stays endless.
///
/// libsndfile seeks while it opens a file: back to the start after looking
/// at the signature, back to the first audio page of an OGG after looking
/// for its end. The first `keptLength` bytes are kept so those seeks work;
/// a seek past what has arrived, or to the end, fails, which libsndfile
/// takes as a stream of unknown length. Owns the descriptor; used by the
/// thread that reads the file.
final class ForwardStream {
  /// Bytes of the stream's start kept for libsndfile's seeks while opening.
  static let keptLength = 1 << 20

  private let descriptor: Int32
  /// Whether a read may return what one `read()` gave: FLAC's and OGG's
  /// readers take any count of bytes, headers included, and so decode what
  /// has arrived without waiting for a whole request (the last 2 KiB of a
  /// short stream, say, until the writer closes it). Headerless PCM is read
  /// in samples, and a sample split between two reads would be lost, so it
  /// always gets whole requests.
  private let allowsShortReads: Bool
  /// The stream's first bytes (up to `keptLength`).
  private var kept: [UInt8]
  /// Bytes taken from the descriptor so far.
  private var arrived: Int64
  /// Where libsndfile reads next.
  private var position: Int64 = 0

  /// - Parameters:
  ///   - descriptor: the stream, owned from now on.
  ///   - head: bytes already read from it (its start).
  init(descriptor: Int32, head: [UInt8], allowsShortReads: Bool) {
    self.descriptor = descriptor
    self.allowsShortReads = allowsShortReads
    kept = head
    kept.reserveCapacity(Self.keptLength)
    arrived = Int64(head.count)
  }

  deinit { close(descriptor) }

  /// Opens the stream with libsndfile; `info` as for `sf_open`.
  func open(_ info: inout SF_INFO) -> OpaquePointer? {
    var calls = SF_VIRTUAL_IO(
      get_filelen: { _ in Int64.max },
      seek: { offset, whence, user in
        ForwardStream.from(user).seek(offset, whence: whence)
      },
      read: { buffer, count, user in
        ForwardStream.from(user).read(into: buffer, count: count)
      },
      write: { _, _, _ in 0 },
      tell: { user in ForwardStream.from(user).position })
    return sf_open_virtual(
      &calls, Int32(SFM_READ), &info, Unmanaged.passUnretained(self).toOpaque())
  }

  private static func from(_ user: UnsafeMutableRawPointer?) -> ForwardStream {
    Unmanaged<ForwardStream>.fromOpaque(user!).takeUnretainedValue()
  }

  private func seek(_ offset: sf_count_t, whence: Int32) -> sf_count_t {
    let target: Int64
    switch whence {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = position + offset
    default: return -1
    }
    // Forward only to what has arrived; back only into the kept start.
    guard target >= 0, target == arrived || (target < arrived && target < kept.count) else {
      return -1
    }
    position = target
    return target
  }

  private func read(into buffer: UnsafeMutableRawPointer?, count: sf_count_t) -> sf_count_t {
    guard let buffer, count > 0 else { return 0 }
    let wanted = Int(count)
    var done = 0
    // From the kept start first (after a seek back).
    if position < arrived {
      guard position < kept.count else { return 0 }
      let take = min(wanted, kept.count - Int(position))
      kept.withUnsafeBytes { bytes in
        buffer.copyMemory(from: bytes.baseAddress! + Int(position), byteCount: take)
      }
      position += Int64(take)
      done = take
    }
    // Past the kept start, only what follows the last byte that arrived.
    while done < wanted && position == arrived {
      if done > 0 && allowsShortReads { break }
      let got = StreamStop.read(descriptor, buffer + done, wanted - done)
      if got <= 0 { break }
      if kept.count < Self.keptLength {
        let keep = min(got, Self.keptLength - kept.count)
        kept.append(
          contentsOf: UnsafeRawBufferPointer(start: buffer + done, count: keep))
      }
      done += got
      arrived += Int64(got)
      position += Int64(got)
    }
    return sf_count_t(done)
  }
}
