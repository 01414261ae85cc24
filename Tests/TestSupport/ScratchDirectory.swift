import Foundation

/// A fresh folder under the temporary directory for one test, removed with
/// everything in it when the last reference to it goes (a suite that holds
/// one keeps it for exactly one test). `MICLOOP_KEEP_SCRATCH=1` keeps every
/// folder, to look at what a failed test left.
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

  deinit {
    if !Self.keepsFolders { try? FileManager.default.removeItem(atPath: path) }
  }

  /// The folder as a file URL.
  public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

  /// The path of `name` inside the folder.
  public func file(_ name: String) -> String { path + "/" + name }

  /// The names of the files in `folder` (inside this one), sorted.
  public func names(in folder: String = "") throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? path : file(folder))
      .sorted()
  }

  /// Whether folders are kept (`MICLOOP_KEEP_SCRATCH=1`).
  public static let keepsFolders =
    ProcessInfo.processInfo.environment["MICLOOP_KEEP_SCRATCH"] == "1"

  /// A folder that lives until the test process exits (for a server's
  /// runtime files, or a test that hands its folder to helpers it does not
  /// wait for); removed then, unless kept.
  public static func untilExit(_ tag: String = "test") throws -> URL {
    let scratch = try ScratchDirectory(tag)
    ProcessScratch.shared.keep(scratch)
    return scratch.url
  }
}

/// The folders kept until the process exits, removed by an `atexit` hook.
private final class ProcessScratch: @unchecked Sendable {
  static let shared = ProcessScratch()
  private let lock = NSLock()
  private var folders: [ScratchDirectory] = []

  private init() {
    atexit { ProcessScratch.shared.removeAll() }
  }

  func keep(_ folder: ScratchDirectory) {
    lock.lock()
    folders.append(folder)
    lock.unlock()
  }

  private func removeAll() {
    lock.lock()
    let held = folders
    folders = []
    lock.unlock()
    withExtendedLifetime(held) {}
  }
}
