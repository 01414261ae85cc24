internal import CSndFile

#if canImport(Glibc)
  import Glibc
#endif

/// Reads an audio file (anything libsndfile reads: WAV, FLAC, OGG, AIFF …)
/// block by block as interleaved Float32 in [−1, 1], so files of any length
/// stream in constant memory. Owned and used by one thread at a time.
public final class AudioFileReader {
  /// The path given, or "-" for standard input.
  public let path: String
  /// Frames per second.
  public let sampleRate: Double
  /// Interleaved channels per frame.
  public let channelCount: Int
  /// Frames the header promises; `nil` when unknown (a pipe).
  public let declaredFrameCount: Int64?
  /// A short name of the container and encoding, such as "WAV 16-bit".
  public let formatName: String
  /// Frames delivered so far.
  public private(set) var framesRead: Int64 = 0
  private var file: OpaquePointer?
  /// Why reading stopped before the end, when the data turned out damaged.
  private var damage: String?
  private let subtype: Int32
  /// Grown on the first 16-bit read (nothing is allocated before `init` succeeds).
  private var shortBuffer = UnsafeMutableBufferPointer<Int16>(start: nil, count: 0)

  /// Opens `path` for reading; "-" reads standard input. Standard input,
  /// pipes and FIFOs stream when they carry a WAV; other formats are
  /// copied to a temporary file first (they must seek).
  /// - Parameter raw: the layout of headerless PCM; `nil` for a file with
  ///   a header. Raw input always streams, from a pipe or a file.
  public init(path: String, raw: RawPCMFormat? = nil) throws(AudioFileError) {
    self.path = path
    var info = SF_INFO()
    if let raw {
      info.samplerate = Int32(raw.sampleRate)
      info.channels = Int32(raw.channelCount)
      info.format = Int32(SF_FORMAT_RAW) | raw.encoding.libsndfileSubtype | Int32(SF_ENDIAN_LITTLE)
    }
    let handle: OpaquePointer?
    var isStream = path == "-"
    if path == "-" {
      let source = dup(STDIN_FILENO)
      // Raw PCM has no container to look into: libsndfile streams it as it is.
      let readable = raw != nil ? source : try StreamInput.readable(source, path: "standard input")
      handle = sf_open_fd(readable, Int32(SFM_READ), &info, 1)
    } else {
      var status = stat()
      guard stat(path, &status) == 0 else {
        if errno == ENOENT { throw .notFound(path: path) }
        throw .readFailed(path: path, reason: String(cString: strerror(errno)))
      }
      let kind = status.st_mode & S_IFMT
      if kind == S_IFDIR { throw .isDirectory(path: path) }
      guard access(path, R_OK) == 0 else {
        throw .readFailed(path: path, reason: String(cString: strerror(errno)))
      }
      isStream = kind != S_IFREG
      if kind == S_IFREG || raw != nil {
        if kind == S_IFREG && status.st_size == 0 { throw .empty(path: path) }
        handle = sf_open(path, Int32(SFM_READ), &info)
      } else {
        // A pipe or FIFO named by a path (`<(cat f.wav)`, /dev/stdin, mkfifo).
        let source = open(path, O_RDONLY)
        guard source >= 0 else {
          throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
        let readable = try StreamInput.readable(source, path: path)
        handle = sf_open_fd(readable, Int32(SFM_READ), &info, 1)
      }
    }
    guard let handle else {
      let reason = String(cString: sf_strerror(nil))
      if path == "-" && reason.contains("not") == false {
        throw .notAudio(path: "standard input", reason: reason)
      }
      throw .notAudio(path: path == "-" ? "standard input" : path, reason: Self.shorten(reason))
    }
    file = handle
    sampleRate = Double(info.samplerate)
    channelCount = Int(info.channels)
    // A stream's length is unknown (libsndfile reports 0, the maximum, or
    // for raw PCM the maximum divided by the frame size).
    let isPipe = isStream && (raw != nil || info.frames <= 0 || info.frames == Int64.max)
    declaredFrameCount = isPipe ? nil : info.frames
    formatName = Self.describe(format: info.format)
    subtype = info.format & Int32(SF_FORMAT_SUBMASK)
    guard sampleRate > 0, channelCount > 0 else {
      sf_close(handle)
      file = nil
      throw .notAudio(path: path, reason: "no sample rate or channels in the header")
    }
  }

  deinit {
    if let file { sf_close(file) }
    if shortBuffer.baseAddress != nil { shortBuffer.deallocate() }
  }

  /// Reads up to `frameCount` frames into `buffer` (interleaved, at least
  /// `frameCount × channelCount` samples).
  /// - Returns: frames read; 0 at the end of the file.
  public func read(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws(AudioFileError)
    -> Int
  {
    guard let file else { return 0 }
    let got: sf_count_t
    if isSixteenBit {
      got = readSixteenBit(file, into: buffer, frameCount: frameCount)
    } else {
      got = sf_readf_float(file, buffer, sf_count_t(frameCount))
    }
    if got < 0 || (got == 0 && sf_error(file) != 0) {
      let reason = Self.shorten(String(cString: sf_strerror(file)))
      guard framesRead > 0 else { throw .damaged(path: displayPath, readFrames: 0, reason: reason) }
      // Damaged after good audio: end here; `checkComplete` reports it.
      damage = reason
      sf_close(file)
      self.file = nil
      return 0
    }
    framesRead += got
    return Int(got)
  }

  /// 16-bit files are read as integers and scaled here: the same values as
  /// libsndfile's conversion (x / 32768), several times faster.
  private func readSixteenBit(
    _ file: OpaquePointer, into buffer: UnsafeMutablePointer<Float>, frameCount: Int
  )
    -> sf_count_t
  {
    let sampleCount = frameCount * channelCount
    if shortBuffer.count < sampleCount {
      if shortBuffer.baseAddress != nil { shortBuffer.deallocate() }
      shortBuffer = .allocate(capacity: sampleCount)
    }
    let raw = shortBuffer.baseAddress!
    let got = sf_readf_short(file, raw, sf_count_t(frameCount))
    guard got > 0 else { return got }
    let count = Int(got) * channelCount
    // A plain loop: the compiler vectorises the conversion.
    let scale: Float = 1 / 32_768
    for index in 0..<count { buffer[index] = Float(raw[index]) * scale }
    return got
  }

  /// Whether samples can be NaN or infinite (floating-point files only).
  public var canHoldNonFiniteSamples: Bool { !isInteger }

  private var isSixteenBit: Bool { subtype == Int32(SF_FORMAT_PCM_16) }

  private var isInteger: Bool {
    switch subtype {
    case Int32(SF_FORMAT_FLOAT), Int32(SF_FORMAT_DOUBLE), Int32(SF_FORMAT_VORBIS),
      Int32(SF_FORMAT_OPUS),
      Int32(SF_FORMAT_MPEG_LAYER_III), Int32(SF_FORMAT_MPEG_LAYER_II),
      Int32(SF_FORMAT_MPEG_LAYER_I):
      return false
    default: return true
    }
  }

  /// Checks, after the last read, that every frame the header promised was
  /// present.
  public func checkComplete() throws(AudioFileError) {
    if let damage { throw .damaged(path: displayPath, readFrames: framesRead, reason: damage) }
    if framesRead == 0 { throw .empty(path: displayPath) }
    if let declared = declaredFrameCount, declared > framesRead {
      throw .truncated(path: displayPath, expectedFrames: declared, readFrames: framesRead)
    }
    if let declared = headerDeclaredFrames(), declared > framesRead {
      throw .truncated(path: displayPath, expectedFrames: declared, readFrames: framesRead)
    }
  }

  /// The path as messages name it ("standard input" for `-`).
  public var displayPath: String { path == "-" ? "standard input" : path }

  /// Frames the data chunk's header claims when libsndfile had to shorten it
  /// to the bytes present (it notes this in its log).
  private func headerDeclaredFrames() -> Int64? {
    guard let file else { return nil }
    var log = [CChar](repeating: 0, count: 4096)
    let length = log.withUnsafeMutableBufferPointer {
      sf_command(file, Int32(SFC_GET_LOG_INFO), $0.baseAddress, Int32($0.count))
    }
    guard length > 0 else { return nil }
    let text = String(
      decoding: log.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // e.g. "data : 960000 (should be 479956)" — libsndfile's note on a short file.
    for line in text.split(separator: "\n")
    where line.contains("data") && line.contains("should be") {
      let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
      guard numbers.count >= 2, numbers[0] > numbers[1] else { continue }
      let bytesPerFrame = Int64(bytesPerSample) * Int64(channelCount)
      guard bytesPerFrame > 0 else { return nil }
      return numbers[0] / bytesPerFrame
    }
    return nil
  }

  private var bytesPerSample: Int {
    guard let file else { return 0 }
    var info = SF_INFO()
    sf_command(file, Int32(SFC_GET_CURRENT_SF_INFO), &info, Int32(MemoryLayout<SF_INFO>.size))
    switch info.format & Int32(SF_FORMAT_SUBMASK) {
    case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_ULAW),
      Int32(SF_FORMAT_ALAW):
      return 1
    case Int32(SF_FORMAT_PCM_16): return 2
    case Int32(SF_FORMAT_PCM_24): return 3
    case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT): return 4
    case Int32(SF_FORMAT_DOUBLE): return 8
    default: return 0
    }
  }

  private static func shorten(_ reason: String) -> String {
    var text = reason
    while text.hasSuffix(".") || text.hasSuffix("\n") { text.removeLast() }
    return text.lowercased().hasPrefix("format not recognised")
      || text.contains("unknown format") ? "unknown format" : text
  }

  static func describe(format: Int32) -> String {
    let container: String
    switch format & Int32(SF_FORMAT_TYPEMASK) {
    case Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX): container = "WAV"
    case Int32(SF_FORMAT_RF64): container = "RF64"
    case Int32(SF_FORMAT_FLAC): container = "FLAC"
    case Int32(SF_FORMAT_OGG): container = "OGG"
    case Int32(SF_FORMAT_AIFF): container = "AIFF"
    case Int32(SF_FORMAT_AU): container = "AU"
    case Int32(SF_FORMAT_W64): container = "W64"
    case Int32(SF_FORMAT_CAF): container = "CAF"
    case Int32(SF_FORMAT_MPEG): container = "MPEG"
    default: container = "audio"
    }
    let encoding: String
    switch format & Int32(SF_FORMAT_SUBMASK) {
    case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8): encoding = "8-bit"
    case Int32(SF_FORMAT_PCM_16): encoding = "16-bit"
    case Int32(SF_FORMAT_PCM_24): encoding = "24-bit"
    case Int32(SF_FORMAT_PCM_32): encoding = "32-bit"
    case Int32(SF_FORMAT_FLOAT): encoding = "float"
    case Int32(SF_FORMAT_DOUBLE): encoding = "double"
    case Int32(SF_FORMAT_VORBIS): encoding = "Vorbis"
    case Int32(SF_FORMAT_OPUS): encoding = "Opus"
    case Int32(SF_FORMAT_ULAW): encoding = "µ-law"
    case Int32(SF_FORMAT_ALAW): encoding = "A-law"
    default: encoding = ""
    }
    return encoding.isEmpty ? container : "\(container) \(encoding)"
  }
}
