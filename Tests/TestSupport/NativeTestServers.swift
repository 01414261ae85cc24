import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A private JACK server for in-process tests: `jackd -d dummy` (clock-paced,
/// no sound card) under a name no one else uses, stopped with SIGTERM so
/// it leaves JACK's server registry clean. A server that cannot start
/// fails the test.
public final class PrivateJackServer {
  public let name: String
  public let periodFrames: Int
  private var process: TestServerProcess?

  public init(periodFrames: Int = 64) throws {
    self.periodFrames = periodFrames
    name = "micloop-\(getpid())-\(TestServerProcess.nextNumber())"
    let environment = ["JACK_NO_AUDIO_RESERVATION": "1", "JACK_DEFAULT_SERVER": name]
    process = try TestServerProcess(
      ["jackd", "-n", name, "-d", "dummy", "-r", "48000", "-p", "\(periodFrames)"],
      environment: environment)
    guard
      try TestServerProcess.waitUntil(["jack_lsp", "-s", name], environment: environment)
    else {
      stop()
      throw TestServerProcess.Failure(description: "the private JACK server \(name) did not answer")
    }
  }

  deinit { stop() }

  public func stop() {
    process?.stop(signal: SIGTERM)
    process = nil
  }
}

/// A private PipeWire daemon for in-process tests, alone in a fresh
/// runtime directory (no session manager: tests link nothing or link by
/// hand). Clients reach it at `socket`.
public final class PrivatePipeWire {
  public let socket: String
  private var process: TestServerProcess?

  public init() throws {
    let runtime = try ScratchDirectory.untilExit("pw")
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
    socket = runtime.appendingPathComponent("pipewire-0").path
    let environment = ["XDG_RUNTIME_DIR": runtime.path]
    process = try TestServerProcess(["pipewire"], environment: environment)
    guard
      try TestServerProcess.waitUntil(
        ["pw-cli", "info", "0"],
        environment: environment.merging(["PIPEWIRE_REMOTE": socket]) { $1 })
    else {
      stop()
      throw TestServerProcess.Failure(description: "the private PipeWire server did not answer")
    }
  }

  deinit { stop() }

  public func stop() {
    process?.stop(signal: SIGKILL)
    process = nil
  }
}

/// A server process started with posix_spawn (Foundation's Process can
/// hang waiting while a sound server child runs), its output in a file.
final class TestServerProcess {
  struct Failure: Error, CustomStringConvertible { let description: String }

  private static let counter = Mutex(0)

  static func nextNumber() -> Int {
    counter.withLock {
      $0 += 1
      return $0
    }
  }

  let pid: pid_t

  init(_ arguments: [String], environment: [String: String]) throws {
    let log = try ScratchDirectory.untilExit("server").appendingPathComponent("server.log").path
    pid = try Self.spawn(arguments, environment: environment, output: log)
  }

  func stop(signal: Int32) {
    kill(pid, signal)
    var status: Int32 = 0
    for _ in 0..<50 {
      if waitpid(pid, &status, WNOHANG) == pid { return }
      usleep(100_000)
    }
    kill(pid, SIGKILL)
    waitpid(pid, &status, 0)
  }

  /// Runs `arguments` every 0.1 s until it succeeds (true) or 5 s pass.
  static func waitUntil(_ arguments: [String], environment: [String: String]) throws -> Bool {
    for _ in 0..<50 {
      let pid = try spawn(arguments, environment: environment, output: "/dev/null")
      var status: Int32 = 0
      waitpid(pid, &status, 0)
      if status == 0 { return true }
      usleep(100_000)
    }
    return false
  }

  /// Starts `arguments` with the test's environment plus `environment`.
  static func spawn(_ arguments: [String], environment: [String: String], output: String) throws
    -> pid_t
  {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, STDOUT_FILENO, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
    let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      argv.forEach { free($0) }
      envp.forEach { free($0) }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    var child = pid_t()
    let result = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, envp)
    guard result == 0 else {
      throw Failure(
        description: "\(arguments[0]) could not start: \(String(cString: strerror(result)))")
    }
    return child
  }
}
