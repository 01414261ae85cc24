import AudioFiles

/// Why a recording session could not start or go on. Each description is
/// one line naming the problem and what to do.
public enum RecorderError: Error, Sendable, CustomStringConvertible, Equatable {
  case cannotCreate(path: String, reason: String)
  case notDirectory(path: String)
  case file(AudioFileError)
  /// The stream's rate is outside `RecorderSettings.sampleRates`.
  case unsupportedRate(Double)

  public var description: String {
    switch self {
    case .cannotCreate(let path, let reason):
      return "\(path): cannot create (\(reason)); check the directory exists and is writable"
    case .notDirectory(let path):
      return "\(path): not a directory; give a directory (it is created when missing)"
    case .file(let error): return error.description
    case .unsupportedRate(let rate):
      let range = RecorderSettings.sampleRates
      return
        "a sample rate of \(rate < 1e15 ? String(Int64(rate)) : String(rate)) Hz cannot be recorded (\(Int(range.lowerBound))–\(Int(range.upperBound)) Hz); resample the audio first (for example with sox)"
    }
  }
}
