import Foundation
import TestSupport
import Testing

/// micloop opens libjack and libpipewire only when a device needs them:
/// on a machine without them it starts and runs ALSA commands, and a JACK
/// or PipeWire device is refused in one line that names the library. The
/// libraries are hidden in a private mount namespace (`unshare`, as root).
@Suite(.needsRoot) struct MissingLibraryTests {
  static let names = ["libjack.so.0", "libpipewire-0.3.so.0"]

  /// Runs `command` (a shell line) where both libraries are unreadable.
  func withoutLibraries(_ command: String) throws -> MicLoopBinary.Result {
    let libraries = Self.names.compactMap(SystemLibrary.path(of:))
    try #require(libraries.count == Self.names.count, "the linker's cache lacks \(Self.names)")
    let hide = libraries.map { "mount --bind /dev/null \($0)" }.joined(separator: " && ")
    let process = try SpawnedProcess(
      ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\(hide) && \(command)"],
      environment: ProcessInfo.processInfo.environment)
    return process.result()
  }

  @Test func alsaCommandsRunWithoutTheServersLibraries() throws {
    let result = try withoutLibraries(
      "\(MicLoopBinary.path) tone -f 440 --duration 0.2 -D null && \(MicLoopBinary.path) devices")
    #expect(result.status == 0, "\(result.errorOutput)")
    #expect(result.output.contains("Playing 440.00 Hz"), "\(result.output)")
    #expect(result.output.contains("Capture devices:"), "\(result.output)")
  }

  @Test(arguments: [("jack", "libjack.so.0"), ("pw", "libpipewire-0.3.so.0")])
  func aNativeDeviceNamesTheMissingLibrary(device: String, library: String) throws {
    let result = try withoutLibraries(
      "\(MicLoopBinary.path) loopback -D \(device) --duration 1")
    #expect(result.status == 1)
    #expect(result.errorLines.count == 1, "\(result.errorOutput)")
    #expect(result.errorOutput.contains(library), "\(result.errorOutput)")
    #expect(result.errorOutput.contains("install"), "\(result.errorOutput)")
  }
}
