import Foundation

/// A fresh folder under the temporary directory for one test, removed with
/// everything in it when the last reference to it goes.
public final class ScratchDirectory: @unchecked Sendable {
  public let path: String

  /// Makes `micloop-TAG-UUID` under the temporary directory.
  public init(_ tag: String = "test") throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent(
        "micloop-\(tag)-\(UUID().uuidString)"
      ).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// The path of `name` inside the folder.
  public func file(_ name: String) -> String { path + "/" + name }

  /// The names of the files in `folder` (inside this one), sorted.
  public func names(in folder: String = "") throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? path : file(folder))
      .sorted()
  }
}
