internal import CSndFile

#if canImport(Glibc)
  import Glibc
#endif

/// The sample encoding of a file being written.
public enum AudioFileEncoding: String, Sendable, CaseIterable {
  case pcm16 = "s16"
  case pcm24 = "s24"
  case pcm32 = "s32"
  case float = "float"

  var libsndfileSubtype: Int32 {
    switch self {
    case .pcm16: return Int32(SF_FORMAT_PCM_16)
    case .pcm24: return Int32(SF_FORMAT_PCM_24)
    case .pcm32: return Int32(SF_FORMAT_PCM_32)
    case .float: return Int32(SF_FORMAT_FLOAT)
    }
  }
}

/// Writes interleaved Float32 frames to an audio file through libsndfile;
/// the container follows the extension (.wav, .flac, .ogg, .aiff, .au,
/// .w64, .caf). The header is rewritten after every block, so the file is
/// valid at every moment: a recording cut short by Ctrl-C, a kill or a
/// crash keeps everything written so far. Used by one thread at a time.
public final class AudioFileWriter {
  public let path: String
  public let sampleRate: Double
  public let channelCount: Int
  /// Frames written so far.
  public private(set) var framesWritten: Int64 = 0
  private var file: OpaquePointer?

  /// - Parameters:
  ///   - broadcast: a Broadcast Wave `bext` chunk to write in a WAV/RF64
  ///     file (ignored by other containers).
  ///   - typeName: the name whose extension chooses the container, when
  ///     `path` is a temporary name (by default `path`).
  public init(
    path: String, sampleRate: Double, channelCount: Int, encoding: AudioFileEncoding = .pcm16,
    broadcast: BroadcastInfo? = nil, typeName: String? = nil
  )
    throws(AudioFileError)
  {
    self.path = path
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    let lowered = (typeName ?? path).lowercased()
    func has(_ suffix: String) -> Bool { lowered.hasSuffix(suffix) }
    // RF64 that writes itself as a plain WAV while the data fits in 4 GiB:
    // a long recording goes on past 4 GiB instead of wrapping the size.
    var container = Int32(SF_FORMAT_RF64)
    var subtype = encoding.libsndfileSubtype
    if has(".flac") {
      container = Int32(SF_FORMAT_FLAC)
      if encoding == .float || encoding == .pcm32 { subtype = Int32(SF_FORMAT_PCM_24) }
    } else if has(".ogg") || has(".oga") {
      container = Int32(SF_FORMAT_OGG)
      subtype = Int32(SF_FORMAT_VORBIS)
    } else if has(".aif") || has(".aiff") {
      container = Int32(SF_FORMAT_AIFF)
    } else if has(".au") {
      container = Int32(SF_FORMAT_AU)
    } else if has(".w64") {
      container = Int32(SF_FORMAT_W64)
    } else if has(".caf") {
      container = Int32(SF_FORMAT_CAF)
    } else if !has(".wav") {
      throw .unsupportedFormat(
        path: path,
        reason: "unknown file type; end the name in .wav, .flac, .ogg, .aiff, .au, .w64 or .caf")
    }
    var info = SF_INFO()
    info.samplerate = Int32(sampleRate)
    info.channels = Int32(channelCount)
    info.format = container | subtype
    guard sf_format_check(&info) != 0 else {
      throw .unsupportedFormat(
        path: path,
        reason:
          "cannot write \(channelCount) channel(s) at \(Int(sampleRate)) Hz in this format; use .wav"
      )
    }
    let descriptor = try Self.openExclusively(path)
    guard let handle = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
      let reason = String(cString: sf_strerror(nil))
      Glibc.close(descriptor)
      throw .cannotCreate(path: path, reason: reason)
    }
    file = handle
    if let broadcast, container == Int32(SF_FORMAT_RF64) {
      // Before any audio: the chunk goes in the header.
      var info = broadcast.libsndfileInfo
      sf_command(
        handle, Int32(SFC_SET_BROADCAST_INFO), &info, Int32(MemoryLayout.size(ofValue: info)))
    }
    if container == Int32(SF_FORMAT_RF64) {
      sf_command(handle, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
      // Keep the header true after every write (valid file at every moment).
      sf_command(handle, Int32(SFC_SET_UPDATE_HEADER_AUTO), nil, Int32(SF_TRUE))
    }
    // Float input beyond ±1 is clipped, not wrapped, in integer files.
    sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
  }

  deinit { close() }

  /// Opens `path` for writing, emptied, with a lock no other writer of
  /// micloop's can share while it is open, never blocking (a FIFO nobody
  /// reads would hold `open` for ever) and closed in any program micloop
  /// starts. Refuses what is not a regular file or a character device
  /// (/dev/null).
  private static func openExclusively(_ path: String) throws(AudioFileError) -> Int32 {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o666)
    guard descriptor >= 0 else {
      throw .cannotCreate(path: path, reason: String(cString: strerror(errno)))
    }
    var status = stat()
    fstat(descriptor, &status)
    let type = status.st_mode & S_IFMT
    guard type == S_IFREG || type == S_IFCHR else {
      Glibc.close(descriptor)
      throw .notRegularFile(
        path: path, kind: type == S_IFIFO ? "FIFO" : type == S_IFSOCK ? "socket" : "special file")
    }
    if type == S_IFREG {
      guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
        Glibc.close(descriptor)
        throw .inUse(path: path)
      }
      // Emptied only once it is ours: a refused second writer leaves the first's file whole.
      ftruncate(descriptor, 0)
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    return descriptor
  }

  /// Appends `frameCount` interleaved frames.
  public func write(_ samples: UnsafePointer<Float>, frameCount: Int) throws(AudioFileError) {
    guard let file else { throw .writeFailed(path: path, reason: "the file is closed") }
    let written = sf_writef_float(file, samples, sf_count_t(frameCount))
    framesWritten += written
    guard written == frameCount else {
      throw .writeFailed(path: path, reason: String(cString: sf_strerror(file)))
    }
  }

  /// Appends interleaved frames from an array.
  public func write(_ samples: [Float]) throws(AudioFileError) {
    let frames = samples.count / channelCount
    try samples.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
      guard let base = buffer.baseAddress else { return }
      try write(base, frameCount: frames)
    }
  }

  /// Forces what was written so far onto the disk (`fsync`): a power cut
  /// then loses nothing before this call. Slow; call it every second or so.
  public func sync() {
    if let file { sf_write_sync(file) }
  }

  /// Finishes the file (writes the final header and closes it).
  public func close() {
    if let file {
      sf_write_sync(file)
      sf_close(file)
    }
    file = nil
  }
}
