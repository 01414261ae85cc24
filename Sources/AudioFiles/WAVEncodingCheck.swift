/// Finds the encoding a WAV's `fmt ` chunk names before libsndfile opens
/// the file, so that MPEG audio in a WAV is refused in micloop's own words:
/// libsndfile hands it to libmpg123, which prints its complaints about
/// damaged data on standard error itself, before micloop can say anything.
/// Any thread.
enum WAVEncodingCheck {
  /// How far into a file the `fmt ` chunk is looked for.
  static let searchLimit = 65_536

  /// WAVE_FORMAT_MPEGLAYER3: what libsndfile decodes with libmpg123.
  static let mpegLayer3Tag: UInt16 = 0x0055
  /// WAVE_FORMAT_EXTENSIBLE: the real tag is in the sub-format GUID.
  private static let extensibleTag: UInt16 = 0xFFFE

  enum Finding: Equatable {
    /// The format tag of the `fmt ` chunk.
    case tag(UInt16)
    /// The first `count` bytes are needed to tell.
    case needsBytes(Int)
    /// Not a WAV, or no `fmt ` chunk before the data or within the limit.
    case none
  }

  /// The format tag in `head`, the first bytes of a file.
  static func formatTag(in head: [UInt8]) -> Finding {
    guard head.count >= 12 else { return .needsBytes(12) }
    guard let container = AudioContainer.identify(head), container == .wav || container == .rf64
    else { return .none }
    let bigEndian = head[3] == 0x58  // RIFX
    func number(at offset: Int, bytes: Int) -> Int {
      var value = 0
      for index in 0..<bytes {
        let byte = Int(head[offset + (bigEndian ? index : bytes - 1 - index)])
        value = value << 8 | byte
      }
      return value
    }
    var offset = 12
    while offset + 8 <= searchLimit {
      guard head.count >= offset + 8 else { return .needsBytes(offset + 8) }
      let id = String(decoding: head[offset..<offset + 4], as: UTF8.self)
      let size = number(at: offset + 4, bytes: 4)
      if id == "data" { return .none }
      if id == "fmt " {
        let body = offset + 8
        guard head.count >= body + 2 else { return .needsBytes(body + 2) }
        let tag = UInt16(number(at: body, bytes: 2))
        guard tag == extensibleTag, size >= 26 else { return .tag(tag) }
        guard head.count >= body + 26 else { return .needsBytes(body + 26) }
        return .tag(UInt16(number(at: body + 24, bytes: 2)))
      }
      offset = nextChunk(after: offset, size: size)
    }
    return .none
  }

  private static func nextChunk(after offset: Int, size: Int) -> Int {
    // Chunks are padded to an even length.
    offset + 8 + size + size % 2
  }

  /// Whether `tag` is an encoding micloop refuses to hand to libsndfile.
  static func isRefused(_ tag: UInt16) -> Bool { tag == mpegLayer3Tag }

  /// What a refused tag holds, for messages.
  static func name(of tag: UInt16) -> String {
    tag == mpegLayer3Tag
      ? "MPEG layer 3 audio in a WAV (format 0x55)" : "the WAV's encoding (format \(tag))"
  }
}
