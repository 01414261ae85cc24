import Foundation

/// A child process started with posix_spawn whose output goes to files:
/// the live tests use it instead of Foundation's Process, whose waits can
/// hang on Linux while a sound server child is running.
final class SpawnedProcess {
  let pid: pid_t
  let outputPath: String
  private let errorPath: String
  private var status: Int32?

  /// Starts `arguments`; standard input is `standardInput` (a file or a
  /// FIFO) or /dev/null.
  init(_ arguments: [String], environment: [String: String], standardInput: String? = nil) throws {
    let directory = try MicLoopBinary.temporaryDirectory()
    outputPath = directory.appendingPathComponent("stdout").path
    errorPath = directory.appendingPathComponent("stderr").path
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(
      &actions, STDIN_FILENO, standardInput ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, STDOUT_FILENO, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(
      &actions, STDERR_FILENO, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    pid = try Self.spawn(arguments, environment: environment, actions: &actions)
  }

  /// Starts `arguments` with `actions` applied, every signal at its default
  /// disposition and none blocked (the test process blocks and ignores some,
  /// and a child would inherit that).
  static func spawn(
    _ arguments: [String], environment: [String: String],
    actions: inout posix_spawn_file_actions_t
  ) throws -> pid_t {
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
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
      throw VirtualDevices.StartFailure(
        description: "\(arguments[0]) could not start: \(String(cString: strerror(result)))")
    }
    return child
  }

  deinit {
    if status == nil {
      kill(pid, SIGKILL)
      _ = wait()
    }
  }

  var isRunning: Bool {
    guard status == nil else { return false }
    var value: Int32 = 0
    if waitpid(pid, &value, WNOHANG) == pid {
      status = value
      return false
    }
    return true
  }

  /// Signals the process while it is ours: once it has been waited for,
  /// its pid may already name another process, or a thread of this test
  /// run (pids wrap at 32768 here, and a test run spawns thousands).
  func signal(_ number: Int32) {
    if status == nil { kill(pid, number) }
  }

  /// Waits until the process has printed `text` on standard output (for
  /// example its start line); false when it exits first or `timeout`
  /// seconds pass. Live tests wait for this instead of sleeping a fixed time.
  @discardableResult
  func waitForOutput(_ text: String, timeout: Double = 60) -> Bool {
    waitForOutput(timeout: timeout) { $0.contains(text) }
  }

  /// Waits until what the process printed on standard output satisfies
  /// `isComplete`; false when it exits first or `timeout` seconds pass.
  @discardableResult
  func waitForOutput(timeout: Double = 60, _ isComplete: (String) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if let output = try? String(contentsOfFile: outputPath, encoding: .utf8), isComplete(output) {
        return true
      }
      guard isRunning else { return false }
      usleep(20_000)
    }
    return false
  }

  /// Everything printed so far on both outputs, for a failure message
  /// about a process that is still running (a sound server's log).
  var printedSoFar: String {
    [outputPath, errorPath].compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
      .joined()
  }

  /// Waits for the exit and returns the status (128 + signal when killed).
  @discardableResult
  func wait() -> Int32 {
    if status == nil {
      var value: Int32 = 0
      while waitpid(pid, &value, 0) < 0 && errno == EINTR {}
      status = value
    }
    let raw = status ?? 0
    return (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
  }

  /// `result()`, killing the process first when it has not exited within
  /// `seconds` (a player whose server stopped serving it spins for good).
  func result(killingAfter seconds: Double) -> MicLoopBinary.Result {
    let deadline = Date().addingTimeInterval(seconds)
    while status == nil && Date() < deadline {
      var value: Int32 = 0
      if waitpid(pid, &value, WNOHANG) == pid {
        status = value
      } else {
        usleep(20_000)
      }
    }
    signal(SIGKILL)
    return result()
  }

  /// Waits, then gathers the exit and the output as the other CLI tests see it.
  func result() -> MicLoopBinary.Result {
    let code = wait()
    let raw = status ?? 0
    return MicLoopBinary.Result(
      status: code, exitedNormally: (raw & 0x7f) == 0,
      output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
      errorOutput: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
  }
}
