import Foundation

/// A small file system for the disk tests: a tmpfs of a given size
/// mounted on a fresh directory. Mounting needs root, as `make test` runs
/// the tests; without it the test fails with a line that says so rather
/// than passing untested.
struct SmallDisk {
  let path: String

  /// Why the tmpfs could not be mounted.
  struct MountFailure: Error, CustomStringConvertible {
    let description: String
  }

  /// Mounts a tmpfs of `size` (as mount's `size=` option: `2m`, `50m`) at `path`.
  init(size: String, at path: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]
    let error = Pipe()
    process.standardError = error
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let said = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw MountFailure(
        description:
          "cannot mount a \(size) tmpfs at \(path) (\(said.trimmingCharacters(in: .whitespacesAndNewlines))): the disk tests need root, as make test runs them"
      )
    }
    self.path = path
  }

  /// Bytes the file system holds now (its used blocks).
  var usedBytes: Int64 {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return -1 }
    return Int64(info.f_blocks - info.f_bfree) * Int64(info.f_frsize)
  }

  /// Unmounts it (lazily: a process still inside lets go later).
  func unmount() { try? MicLoopBinary.shell(["umount", "-l", path]) }
}
