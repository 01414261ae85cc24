import Foundation
import Testing

/// A private JACK server (`jackd -d dummy`, clock-paced, no sound card)
/// and a private ALSA configuration with its `jack` plugin devices:
/// `jackout` plays into the server (and its dummy playback port),
/// `jackin` captures from a port left unconnected, and `jackthrough` is
/// both (a duplex device for loopback). Tests close a loop by connecting one
/// micloop's output port to another's input (`connect`). Each test starts
/// its own and stops it; a server that cannot start fails the test.
final class JackServer {
  /// One name for every test's server (the suite runs them one at a time):
  /// JACK registers servers in shared memory and refuses a ninth name, so
  /// new names per test would fill the registry on a machine that runs the
  /// tests often; a server of the same name that is gone is replaced.
  let name: String
  let environment: [String: String]
  let periodFrames: Int
  private var server: SpawnedProcess?

  init(periodFrames: Int = 256, name: String = "micloop-test") throws {
    self.periodFrames = periodFrames
    self.name = name
    let directory = try MicLoopBinary.temporaryDirectory()
    let configuration = directory.appendingPathComponent("asound.conf").path
    try """
    pcm.jackin {
      type jack
      capture_ports { 0 "" }
    }
    pcm.jackout {
      type jack
      playback_ports { 0 system:playback_1 }
    }
    pcm.jackthrough {
      type jack
      capture_ports { 0 "" }
      playback_ports { 0 system:playback_1 }
    }
    """.write(toFile: configuration, atomically: true, encoding: .utf8)
    var environment = ProcessInfo.processInfo.environment
    environment["JACK_NO_AUDIO_RESERVATION"] = "1"
    environment["JACK_DEFAULT_SERVER"] = name
    environment["ALSA_CONFIG_PATH"] = "/usr/share/alsa/alsa.conf:\(configuration)"
    self.environment = environment
    try launch()
  }

  /// A server name of this test process's own: other people's test runs on
  /// the same machine use other names. Stopped with SIGTERM (or started
  /// again under the same name after a crash), it leaves JACK's registry clean.
  static func uniqueName(_ tag: String) -> String { "micloop-\(tag)-\(getpid())" }

  /// Starts jackd under this server's name and waits until it answers.
  private func launch() throws {
    let server = try SpawnedProcess(
      [
        "jackd", "-n", name, "-d", "dummy", "-r", "48000", "-p", String(periodFrames),
      ], environment: environment)
    self.server = server
    for _ in 0..<50 {
      guard server.isRunning else {
        throw VirtualDevices.StartFailure(description: "jackd exited with \(server.wait())")
      }
      if try VirtualDevices.wait(for: ["jack_lsp"], environment: environment) == 0 { return }
      usleep(100_000)
    }
    stop()
    throw VirtualDevices.StartFailure(description: "the private JACK server did not answer")
  }

  /// Kills the server outright (SIGKILL), as a crash would.
  func crash() {
    server?.signal(SIGKILL)
    server?.wait()
    server = nil
  }

  /// Starts the server again under the same name (after `crash`).
  func restart() throws { try launch() }

  /// The connections of every port, as `jack_lsp -c` lists them.
  func connections() throws -> [String: [String]] {
    let lines = try SpawnedProcess(["jack_lsp", "-c"], environment: environment).result().output
      .split(separator: "\n").map(String.init)
    var result = [String: [String]]()
    var port: String?
    for line in lines {
      if line.hasPrefix(" ") || line.hasPrefix("\t") {
        if let port { result[port, default: []].append(line.trimmingCharacters(in: .whitespaces)) }
      } else {
        port = line
        result[line] = result[line] ?? []
      }
    }
    return result
  }

  deinit { stop() }

  /// What the server has printed so far, for failure messages.
  var log: String { server?.printedSoFar ?? "" }

  /// Stops the server the way it leaves the registry clean (SIGTERM),
  /// killing it if it has not gone in 5 s.
  func stop() {
    guard let server else { return }
    server.signal(SIGTERM)
    for _ in 0..<50 where server.isRunning { usleep(100_000) }
    if server.isRunning { server.signal(SIGKILL) }
    server.wait()
    self.server = nil
  }

  /// Starts micloop against this server without waiting.
  func startMicloop(_ arguments: [String]) throws -> SpawnedProcess {
    try SpawnedProcess([MicLoopBinary.path] + arguments, environment: environment)
  }

  /// Starts `aplay` playing `file` into the server through `jackout` (the
  /// `plug` converts to the float samples the `jack` plugin takes), at
  /// normal priority: jackd runs the plugin's process callback on a
  /// real-time thread of its own, and a player that jackd dropped spins on
  /// its descriptors, which at real-time priority would starve every other
  /// process of the machine.
  func play(_ file: String) throws -> SpawnedProcess {
    try SpawnedProcess(["aplay", "-q", "-D", "plug:jackout", file], environment: environment)
  }

  /// Waits for a player from `play` to finish, at most `seconds`: jackd
  /// sometimes drops a client it left behind, and the `jack` plugin's
  /// player then spins for good. Its output, and the server's log, are
  /// added to `result`'s; a player that had to be stopped says
  /// `LiveAttempts.playerStalled` there, a loss the server made. Any other
  /// end than success or that stop fails the test.
  func finish(
    _ player: SpawnedProcess, into result: inout MicLoopBinary.Result, seconds: Double = 30
  ) {
    let played = player.result(killingAfter: seconds)
    let stopped = played.status == 128 + SIGKILL
    #expect(played.status == 0 || stopped, "aplay: \(played.errorOutput)")
    result.errorOutput += played.errorOutput + log
    if stopped {
      result.errorOutput += "\n\(LiveAttempts.playerStalled) and was stopped after \(seconds) s"
    }
  }

  /// Connects the output port of the micloop process `from` to the input
  /// port of `to`, waiting up to 10 s for both to exist (the plugin names
  /// its clients PROGRAM.P.PID.N for playback, PROGRAM.C.PID.N for capture).
  func connect(from: SpawnedProcess, program: String = "micloop", to: SpawnedProcess) throws -> Bool
  {
    try connect(output: "\(program).P.\(from.pid).", input: "micloop.C.\(to.pid).")
  }

  /// Connects the first port named `output…` to the first named `input…`,
  /// waiting up to 10 s for both to exist.
  func connect(output: String, input: String) throws -> Bool {
    for _ in 0..<100 {
      let ports = try SpawnedProcess(["jack_lsp"], environment: environment).result().output
        .split(separator: "\n").map(String.init)
      if let source = ports.first(where: { $0.hasPrefix(output) }),
        let destination = ports.first(where: { $0.hasPrefix(input) }),
        try VirtualDevices.wait(
          for: ["jack_connect", source, destination], environment: environment)
          == 0
      {
        return true
      }
      usleep(100_000)
    }
    return false
  }
}
