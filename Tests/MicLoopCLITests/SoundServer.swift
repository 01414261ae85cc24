import Foundation

/// A private sound server a live test starts, seen the same way whichever
/// it is (PulseAudio, PipeWire, JACK), so that a scenario is written once
/// and runs on each (`LiveScenarios`). Each server has a virtual
/// microphone: what is played into it, micloop captures.
protocol SoundServer: AnyObject {
  /// The server's name in failure messages.
  var label: String { get }
  /// The device options of a micloop that captures the virtual microphone.
  var microphone: [String] { get }
  /// Starts micloop as a client of this server without waiting;
  /// `captures` says it captures the virtual microphone.
  func startMicloop(_ arguments: [String], captures: Bool) throws -> SpawnedProcess
  /// Starts playing `file` into the virtual microphone so that `listener`
  /// (a micloop already started) hears it.
  func feed(_ file: String, to listener: SpawnedProcess) throws -> SpawnedProcess
  /// What the server printed, for a failure message.
  var log: String { get }
}

extension VirtualDevices: SoundServer {
  var label: String { "PulseAudio" }
  var microphone: [String] { ["-D", "pulse:mic.monitor"] }
  func startMicloop(_ arguments: [String], captures: Bool) throws -> SpawnedProcess {
    try startMicloop(arguments)
  }
  func feed(_ file: String, to listener: SpawnedProcess) throws -> SpawnedProcess {
    try play(file, into: "mic")
  }
  var log: String { "" }
}

extension PipeWireServer: SoundServer {
  var label: String { "PipeWire" }
  var microphone: [String] { ["-D", "pipewire:NODE=mic"] }
  func startMicloop(_ arguments: [String], captures: Bool) throws -> SpawnedProcess {
    try startMicloop(arguments, capturesMonitor: captures)
  }
  func feed(_ file: String, to listener: SpawnedProcess) throws -> SpawnedProcess {
    // The player's own buffering: asked for a second, the PipeWire plugin
    // once gave back a recording that matched nowhere (Docs/TESTING.md).
    try SpawnedProcess(
      VirtualDevices.realTime + ["aplay", "-q", "-D", "pipewire:NODE=mic", file],
      environment: environment)
  }
  var log: String { "" }
}

extension JackServer: SoundServer {
  var label: String { "JACK" }
  var microphone: [String] { ["-D", "jackin"] }
  func startMicloop(_ arguments: [String], captures: Bool) throws -> SpawnedProcess {
    try startMicloop(arguments)
  }
  /// Plays through `jackout` and connects the player's port to the
  /// listener's (the file should start with silence: connecting takes a
  /// loaded machine a second).
  func feed(_ file: String, to listener: SpawnedProcess) throws -> SpawnedProcess {
    let player = try play(file)
    _ = try connect(from: player, program: "aplay", to: listener)
    return player
  }
}
