/// A file the recording session wrote and listed in its index: the only
/// kind of file the station serves. Safe on any thread.
public struct RecordingEntry: Sendable, Equatable {
  /// The name the index gives it (relative to the recording directory):
  /// the only key a request can use.
  public var name: String
  /// Where it is on disk, as the session reported it (never taken from a request).
  public var path: String
  /// The index's JSON line for it.
  public var indexLine: String

  public init(name: String, path: String, indexLine: String) {
    self.name = name
    self.path = path
    self.indexLine = indexLine
  }
}
