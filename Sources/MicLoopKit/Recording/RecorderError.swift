import AudioFiles

/// Why a recording session could not start or go on. Each description is
/// one line naming the problem and what to do.
public enum RecorderError: Error, Sendable, CustomStringConvertible, Equatable {
  case cannotCreate(path: String, reason: String)
  case notDirectory(path: String)
  case file(AudioFileError)

  public var description: String {
    switch self {
    case .cannotCreate(let path, let reason):
      return "\(path): cannot create (\(reason)); check the directory exists and is writable"
    case .notDirectory(let path):
      return "\(path): not a directory; give --dir a directory (it is created when missing)"
    case .file(let error): return error.description
    }
  }
}
