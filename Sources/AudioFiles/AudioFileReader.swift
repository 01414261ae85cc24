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
  /// The libsndfile handle, for reading metadata chunks.
  var handleForMetadata: OpaquePointer? { file }
  /// The first decoding error, and the frames delivered up to the read
  /// that met it.
  private var damage: (reason: String, framesBefore: Int64)?
  private let subtype: Int32
  /// What keeps a stream's descriptor open while libsndfile reads it.
  private var streamKeeper: AnyObject?
  /// Grown on the first 16-bit read (nothing is allocated before `init` succeeds).
  private var shortBuffer = UnsafeMutableBufferPointer<Int16>(start: nil, count: 0)

  /// The most bytes of a stream held in a temporary file: containers that
  /// must be whole before they are decoded (AIFF, AU, CAF, W64, MP3 …) and
  /// arrive through a pipe are copied to an unnamed file in `$TMPDIR` (or
  /// /tmp) first. WAV, RF64, FLAC, OGG and headerless PCM stream instead.
  public static let spoolLimit: Int64 = 1 << 30

  /// Audio bytes a stream's header may claim that stand for "unknown": a
  /// writer that cannot seek back to fill the length in writes about the
  /// most a WAV holds (sox 0x7FFFF000, arecord 0x7FFFFFFF, others
  /// 0xFFFFFFFF); what a pipe brings is then read to its end.
  static let streamingPlaceholderBytes: Int64 = 0x7FFF_0000

  /// Opens `path` for reading; "-" reads standard input. Standard input,
  /// pipes, FIFOs and character devices are looked at first: WAV, FLAC,
  /// OGG stream as they arrive; other containers libsndfile reads are
  /// held in a temporary file (at most `spoolLimit` bytes); anything else
  /// is refused at once.
  /// - Parameters:
  ///   - raw: the layout of headerless PCM; `nil` for a file with a
  ///     header. Raw input always streams, from a pipe, a device or a file.
  ///   - spoolLimit: the most bytes of a stream held in a temporary file.
  public init(path: String, raw: RawPCMFormat? = nil, spoolLimit: Int64 = spoolLimit)
    throws(AudioFileError)
  {
    self.path = path
    let name = path == "-" ? "standard input" : path
    var info = SF_INFO()
    if let raw {
      info.samplerate = Int32(raw.sampleRate)
      info.channels = Int32(raw.channelCount)
      info.format = Int32(SF_FORMAT_RAW) | raw.encoding.libsndfileSubtype | Int32(SF_ENDIAN_LITTLE)
    }
    let source: Int32
    if path == "-" {
      source = dup(STDIN_FILENO)
      guard source >= 0 else {
        throw .readFailed(path: name, reason: String(cString: strerror(errno)))
      }
    } else {
      var status = stat()
      guard stat(path, &status) == 0 else {
        if errno == ENOENT { throw .notFound(path: path) }
        throw .readFailed(path: path, reason: String(cString: strerror(errno)))
      }
      if status.st_mode & S_IFMT == S_IFDIR { throw .isDirectory(path: path) }
      source = open(path, O_RDONLY | O_CLOEXEC)
      guard source >= 0 else {
        throw .readFailed(path: path, reason: String(cString: strerror(errno)))
      }
    }
    var status = stat()
    fstat(source, &status)
    // A regular file read from its start is opened as it is; anything else
    // (a pipe, a FIFO, a device, standard input part-read) is a stream.
    let isFile = status.st_mode & S_IFMT == S_IFREG && lseek(source, 0, SEEK_CUR) == 0
    let handle: OpaquePointer?
    if isFile {
      if status.st_size == 0 {
        close(source)
        throw .empty(path: name)
      }
      if raw == nil {
        try Self.refuseUndecodedEncoding(source, path: name)
      }
      handle = sf_open_fd(source, Int32(SFM_READ), &info, 1)
    } else {
      let opened = try StreamInput.open(
        source, path: name, raw: raw, info: &info, spoolLimit: spoolLimit)
      handle = opened.handle
      streamKeeper = opened.keeper
    }
    guard let handle else {
      throw .notAudio(path: name, reason: Self.shorten(String(cString: sf_strerror(nil))))
    }
    file = handle
    sampleRate = Double(info.samplerate)
    channelCount = Int(info.channels)
    // Unknown lengths: a stream's (libsndfile reports 0 or the maximum;
    // for raw PCM the maximum divided by the frame size), and a FLAC's
    // whose encoder was stopped before it could write the length (0 in
    // its STREAMINFO, the maximum here): such a file is read to its end.
    let lengthUnknown =
      info.frames <= 0 || info.frames == Int64.max || (!isFile && raw != nil)
      || (path == "-" && raw != nil)
    // A writer that cannot seek back (sox, arecord, ffmpeg on a pipe)
    // leaves its header's length at about the most a WAV can hold.
    // (A hostile header's product may overflow: that is no length either.)
    let frameBytes = Int64(Self.bytesPerSample(format: info.format)) * Int64(max(0, info.channels))
    let claimed = frameBytes.multipliedReportingOverflow(by: max(0, info.frames))
    let isPlaceholder =
      !isFile && (claimed.overflow || claimed.partialValue >= Self.streamingPlaceholderBytes)
    declaredFrameCount = lengthUnknown || isPlaceholder ? nil : info.frames
    formatName = Self.describe(format: info.format)
    subtype = info.format & Int32(SF_FORMAT_SUBMASK)
    guard sampleRate > 0, channelCount > 0 else {
      sf_close(handle)
      file = nil
      throw .notAudio(path: name, reason: "no sample rate or channels in the header")
    }
  }

  /// Throws when the file is a WAV in an encoding micloop refuses (see
  /// `WAVEncodingCheck`); leaves `descriptor` at its start.
  private static func refuseUndecodedEncoding(_ descriptor: Int32, path: String)
    throws(AudioFileError)
  {
    var head = [UInt8](repeating: 0, count: WAVEncodingCheck.searchLimit + 32)
    let got = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, $0.count, 0) }
    guard got > 0 else { return }
    head.removeLast(head.count - got)
    if case .tag(let tag) = WAVEncodingCheck.formatTag(in: head), WAVEncodingCheck.isRefused(tag) {
      close(descriptor)
      throw .unsupportedEncoding(path: path, name: WAVEncodingCheck.name(of: tag))
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
    // A decoder that fails part-way through a request still hands over the
    // frames before the failure, and clears its error on the next read, so
    // the error is looked at after every read. Reading goes on past it (as
    // sox does: FLAC finds the next frame, Vorbis the next page), and
    // `checkComplete` reports it, so what is read and what is said do not
    // depend on how many frames each read asks for.
    let delivered = Int64(max(got, 0))
    if got < 0 || sf_error(file) != 0 {
      let reason = Self.shorten(String(cString: sf_strerror(file)))
      guard framesRead + delivered > 0 else {
        throw .damaged(path: displayPath, readFrames: 0, reason: reason)
      }
      if damage == nil { damage = (reason, framesRead + delivered) }
    }
    framesRead += delivered
    return Int(delivered)
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

  /// The encoding that writes this file's samples again unchanged: its own
  /// for 16-, 24- and 32-bit PCM and float; 16-bit for 8-bit, µ-law and
  /// A-law (which widen exactly); float for the rest.
  public var fileEncoding: AudioFileEncoding {
    switch subtype {
    case Int32(SF_FORMAT_PCM_16), Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8),
      Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW):
      return .pcm16
    case Int32(SF_FORMAT_PCM_24): return .pcm24
    case Int32(SF_FORMAT_PCM_32): return .pcm32
    default: return .float
    }
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
  /// present and that nothing in between failed to decode (nothing to check
  /// when a stop request ended a stream, `StreamStop`). A decoding
  /// error after the last frame of a file of unknown length is how an
  /// interrupted FLAC or OGG ends (its last frame cut short), not damage.
  public func checkComplete() throws(AudioFileError) {
    // A stream ended by a stop request is whole as far as it went.
    if wasStopped { return }
    if framesRead == 0 {
      if let damage { throw .damaged(path: displayPath, readFrames: 0, reason: damage.reason) }
      throw .empty(path: displayPath)
    }
    if let damage, framesRead > damage.framesBefore {
      throw .damaged(path: displayPath, readFrames: framesRead, reason: damage.reason)
    }
    if let declared = declaredFrameCount, declared > framesRead {
      throw .truncated(path: displayPath, expectedFrames: declared, readFrames: framesRead)
    }
    if let declared = headerDeclaredFrames(), declared > framesRead {
      throw .truncated(path: displayPath, expectedFrames: declared, readFrames: framesRead)
    }
  }

  /// Whether a stop request ended a stream that was waiting for data
  /// (`StreamStop`): what was read is all there is, and it is whole.
  public var wasStopped: Bool { StreamStop.didStop.load(ordering: .relaxed) }

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
    return Self.bytesPerSample(format: info.format)
  }

  /// Bytes of one sample in a file of libsndfile's `format` (0 when not fixed).
  private static func bytesPerSample(format: Int32) -> Int {
    switch format & Int32(SF_FORMAT_SUBMASK) {
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
