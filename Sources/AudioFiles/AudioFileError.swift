/// Why an audio file could not be read or written. Each case's description
/// is one line naming the problem and what to do about it.
public enum AudioFileError: Error, Equatable, CustomStringConvertible, Sendable {
  case notFound(path: String)
  case isDirectory(path: String)
  case empty(path: String)
  case notAudio(path: String, reason: String)
  case truncated(path: String, expectedFrames: Int64, readFrames: Int64)
  case readFailed(path: String, reason: String)
  /// Part of the data could not be decoded; `readFrames` frames could be.
  case damaged(path: String, readFrames: Int64, reason: String)
  case cannotCreate(path: String, reason: String)
  case writeFailed(path: String, reason: String)
  case unsupportedFormat(path: String, reason: String)
  /// The program was asked to stop before the stream brought any audio.
  case stoppedBeforeAudio(path: String)
  /// Another program (another micloop) is writing the file.
  case inUse(path: String)
  /// The path names something other than a regular file (a FIFO, a socket).
  case notRegularFile(path: String, kind: String)
  /// An encoding micloop does not decode, found in the header (`name`
  /// says which).
  case unsupportedEncoding(path: String, name: String)
  /// A stream in a container that must be whole before it is decoded grew
  /// past `limit` bytes while it was held in a temporary file.
  case streamTooLongToHold(path: String, container: String, limit: Int64)
  /// A stream that must be held in a temporary file could not be: the
  /// directory refused it or filled up.
  case cannotHoldStream(path: String, container: String, directory: String, reason: String)

  /// Whether the input's content is at fault (empty, not audio, cut short,
  /// damaged) rather than the system (missing file, permissions, disk).
  public var isDataError: Bool {
    switch self {
    case .empty, .notAudio, .truncated, .damaged, .unsupportedEncoding: return true
    default: return false
    }
  }

  public var description: String {
    switch self {
    case .notFound(let path):
      return "\(path): no such file; check the path or pass - to read a WAV from standard input"
    case .isDirectory(let path):
      return "\(path): is a directory, not an audio file; name a file inside it"
    case .empty(let path):
      return
        "\(path): the file is empty (no audio frames); record or choose a file that holds audio"
    case .notAudio(let path, let reason):
      return
        "\(path): not an audio file micloop can read (\(reason)); use WAV, FLAC, OGG or another format libsndfile reads"
    case .truncated(let path, let expected, let read):
      return
        "\(path): truncated: the header promises \(expected) frames but only \(read) are present; the results cover the frames present; re-export or repair the file"
    case .damaged(let path, let frames, let reason):
      return frames == 0
        ? "\(path): the audio data is damaged (\(reason)); re-export or repair the file"
        : "\(path): the audio data is damaged (\(reason)); the results cover the \(frames) frames that could be decoded; re-export or repair the file"
    case .readFailed(let path, let reason):
      return "\(path): read failed (\(reason)); check the file and the disk"
    case .cannotCreate(let path, let reason):
      return
        "\(path): cannot create the file (\(reason)); check the directory exists and is writable"
    case .writeFailed(let path, let reason):
      return "\(path): write failed (\(reason)); check free space"
    case .unsupportedFormat(let path, let reason):
      return "\(path): \(reason)"
    case .stoppedBeforeAudio(let path):
      return "\(path): stopped before any audio arrived"
    case .inUse(let path):
      return "\(path): another program is writing this file; choose another name"
    case .notRegularFile(let path, let kind):
      return
        "\(path): is a \(kind); a recording needs a regular file (its header is rewritten as it grows)"
    case .unsupportedEncoding(let path, let name):
      return
        "\(path): \(name) is not decoded; convert it to PCM first, for example: ffmpeg -i IN -c:a pcm_s16le OUT.wav"
    case .streamTooLongToHold(let path, let container, let limit):
      return
        "\(path): \(container) can only be decoded whole, and more than \(Self.bytes(limit)) arrived (the most held in a temporary file); save it to a file and read that, or send WAV or FLAC, which are decoded as they arrive"
    case .cannotHoldStream(let path, let container, let directory, let reason):
      return
        "\(path): \(container) can only be decoded whole, and the temporary file holding it in \(directory) failed (\(reason)); set TMPDIR to a writable directory with space, or send WAV or FLAC, which are decoded as they arrive"
    }
  }

  /// A byte count as people say it: "1 GiB", "512 MiB", "64 KiB".
  static func bytes(_ count: Int64) -> String {
    let units: [(Int64, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
    for (size, unit) in units where count >= size && count % size == 0 {
      return "\(count / size) \(unit)"
    }
    return "\(count) bytes"
  }
}
