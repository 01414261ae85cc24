/// The audio container named by a stream's first bytes, as far as micloop
/// needs to know it before libsndfile opens the stream: whether it can be
/// decoded as it arrives, or only once it is whole. Any thread.
enum AudioContainer: Equatable {
  case wav
  case rf64
  case flac
  case ogg
  /// A container libsndfile reads only when it can seek in it (AIFF, AU,
  /// W64, CAF, MP3 …), named for messages.
  case seekable(name: String)

  /// Bytes `identify` looks at.
  static let signatureLength = 12

  /// How a stream in this container is handed to libsndfile.
  enum Streaming {
    /// libsndfile streams it from a pipe as it is.
    case pipe
    /// libsndfile streams it through virtual I/O that reads forward and
    /// can go back only within the first bytes.
    case forward
    /// It must be whole, in a file, before it can be decoded.
    case spool
  }

  var streaming: Streaming {
    switch self {
    case .wav, .rf64: return .pipe
    case .flac, .ogg: return .forward
    case .seekable: return .spool
    }
  }

  var name: String {
    switch self {
    case .wav: return "WAV"
    case .rf64: return "RF64"
    case .flac: return "FLAC"
    case .ogg: return "OGG"
    case .seekable(let name): return name
    }
  }

  /// The container whose signature `head` starts with (at least
  /// `signatureLength` bytes for a sure answer), or `nil` when it is none
  /// that libsndfile reads: headerless samples, text, zeros.
  static func identify(_ head: [UInt8]) -> AudioContainer? {
    func tag(at offset: Int) -> String? {
      guard head.count >= offset + 4 else { return nil }
      return String(decoding: head[offset..<offset + 4], as: UTF8.self)
    }
    let first = tag(at: 0) ?? ""
    let third = tag(at: 8) ?? ""
    let isWave = third == "WAVE"
    switch first {
    case "RIFF" where isWave, "RIFX" where isWave: return .wav
    case "RF64" where isWave: return .rf64
    case "fLaC": return .flac
    case "OggS": return .ogg
    case "FORM" where third == "AIFF" || third == "AIFC": return .seekable(name: "AIFF")
    case "FORM" where third == "8SVX" || third == "16SV": return .seekable(name: "IFF/8SVX")
    case ".snd", "dns.": return .seekable(name: "AU")
    case "riff": return .seekable(name: "W64")
    case "caff" where third == "desc": return .seekable(name: "CAF")
    case "NIST": return .seekable(name: "NIST SPHERE")
    case "Crea": return .seekable(name: "VOC")
    case "2BIT": return .seekable(name: "AVR")
    case "MATL": return .seekable(name: "MAT5")
    case "PVF1": return .seekable(name: "PVF")
    case "fap ", " paf": return .seekable(name: "PAF")
    default: break
    }
    // MP3: an ID3v2 tag, or an MPEG audio frame's sync word.
    if head.count >= 3 && head[0] == 0x49 && head[1] == 0x44 && head[2] == 0x33 {
      return .seekable(name: "MP3")
    }
    if head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0 && head[1] & 0x06 != 0 {
      return .seekable(name: "MP3")
    }
    return nil
  }
}
