import Foundation

/// A private PulseAudio server with two null sinks ("mic" and "spk"), which
/// ALSA's pulse plugin turns into real, clock-paced devices: play to
/// pulse:mic and capture from pulse:mic.monitor (the microphone), play to
/// pulse:spk and capture from pulse:spk.monitor (the speaker). Each live
/// test starts its own and stops it; a server that cannot start fails the test.
final class VirtualDevices {
  let runtimeDirectory: URL
  let environment: [String: String]
  private var server: SpawnedProcess?

  struct StartFailure: Error, CustomStringConvertible {
    var description: String
  }

  init() throws {
    runtimeDirectory = try MicLoopBinary.temporaryDirectory()
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_RUNTIME_DIR"] = runtimeDirectory.path
    environment["PULSE_RUNTIME_PATH"] = runtimeDirectory.appendingPathComponent("pulse").path
    self.environment = environment
    try start()
  }

  /// Starts the server (again, after `stop`: a server that comes back).
  func start() throws {
    // In the foreground (a child of the tests), so it cannot outlive them.
    let server = try SpawnedProcess(
      [
        "pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--realtime=yes",
        "--high-priority=yes", "--no-cpu-limit=yes",
        "--log-target=file:\(runtimeDirectory.path)/pulse.log",
        "--load=module-native-protocol-unix",
        "--load=module-null-sink sink_name=mic rate=48000 channels=1",
        "--load=module-null-sink sink_name=spk rate=48000 channels=1",
      ], environment: environment)
    self.server = server
    for _ in 0..<50 {
      guard server.isRunning else {
        throw StartFailure(
          description:
            "pulseaudio exited with \(server.wait()); see \(runtimeDirectory.path)/pulse.log")
      }
      if try Self.wait(for: ["pactl", "info"], environment: environment) == 0 {
        Self.raiseToRealTime(server.pid)
        return
      }
      usleep(100_000)
    }
    stop()
    throw StartFailure(description: "the private PulseAudio server did not answer")
  }

  deinit { stop() }

  /// Stops the server at once (also what a test does to simulate a crash).
  func stop() {
    server?.signal(SIGKILL)
    server?.wait()
    server = nil
  }

  /// Gives every thread of the server real-time priority (below micloop's
  /// audio thread): the server stands in for a sound card, whose clock no
  /// CPU hog can delay. Left at normal priority, its main thread, which
  /// carries every stream's data between the sinks and the clients, falls
  /// behind on a loaded machine and inserts or drops audio.
  private static func raiseToRealTime(_ pid: pid_t) {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var parameters = sched_param()
    parameters.sched_priority = 60
    for task in tasks {
      if let thread = pid_t(task) { sched_setscheduler(thread, SCHED_RR, &parameters) }
    }
  }

  /// Plays `file` into `sink` ("mic" or "spk") at real-time priority and
  /// with a second queued, like a sound card's own feed: on a loaded
  /// machine a player that runs dry leaves a gap of silence and drops what
  /// it had queued.
  func play(_ file: String, into sink: String, bufferTime: Double = 1) throws -> SpawnedProcess {
    try spawn(
      Self.realTime + [
        "aplay", "-q", "--buffer-time=\(Int(bufferTime * 1_000_000))", "-D", "pulse:\(sink)", file,
      ])
  }

  /// Starts recording `seconds` of `source` as 32-bit float mono into
  /// `file` at real-time priority.
  func startRecording(_ source: String, seconds: Int, into file: String) throws -> SpawnedProcess {
    try spawn(
      Self.realTime + [
        "arecord", "-q", "-D", source, "-r", "48000", "-f", "FLOAT_LE", "-c", "1", "-d",
        String(seconds), file,
      ])
  }

  /// The prefix that starts a helper at real-time priority.
  static let realTime = ["chrt", "-r", "50"]

  /// Starts a helper (aplay, arecord, an example) against these devices.
  func spawn(_ arguments: [String], standardInput: String? = nil) throws -> SpawnedProcess {
    try SpawnedProcess(arguments, environment: environment, standardInput: standardInput)
  }

  /// Plays a minute of silence into `sink` ("mic" or "spk") so the sink
  /// keeps running while a test plays short signals into it one after
  /// another: an idle null sink's monitor delivers nothing, and streams
  /// that start and stop on an idle sink upset a capture of its monitor.
  /// Stop the returned player at the end.
  /// Writes what `micloop send` makes of each (plan, text) into one
  /// 48 kHz programme at `path`: `lead` seconds of silence, the messages
  /// 0.4 s apart, `tail` seconds of silence; returns its length in seconds.
  /// Played as one stream started before a listener, it keeps the sink's
  /// streams unchanged while the listener captures its monitor: a stream
  /// starting or stopping on a null sink can stall its monitor's capture
  /// for a second or more (the unit restarts it, but what was sent then is lost).
  static func programme(
    _ messages: [(plan: String, text: String)], lead: Double = 1, tail: Double = 3, at path: String
  ) throws -> Double {
    var parts = [String]()
    func silence(_ seconds: Double) throws -> String {
      let part = path + ".silence\(parts.count).wav"
      try MicLoopBinary.shell([
        "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", part, "trim", "0",
        String(seconds),
      ])
      return part
    }
    parts.append(try silence(lead))
    for (index, message) in messages.enumerated() {
      if index > 0 { parts.append(try silence(0.4)) }
      let part = path + ".message\(index).wav"
      let sent = try MicLoopBinary.run(["send", "--plan", message.plan, message.text, "-o", part])
      guard sent.status == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: sent.errorOutput])
      }
      parts.append(part)
    }
    parts.append(try silence(tail))
    try MicLoopBinary.shell(["sox", "-V1"] + parts + ["-b", "16", path])
    return Double(try MicLoopBinary.samples(path).count) / 48_000
  }

  func keepRunning(_ sink: String) throws -> SpawnedProcess {
    let silence = runtimeDirectory.appendingPathComponent("silence-\(sink).wav").path
    try MicLoopBinary.shell([
      "sox", "-V1", "-n", "-r", "48000", "-b", "16", "-c", "1", silence, "trim", "0", "60",
    ])
    return try play(silence, into: sink)
  }

  /// Starts micloop against these devices without waiting.
  func startMicloop(_ arguments: [String]) throws -> SpawnedProcess {
    try SpawnedProcess([MicLoopBinary.path] + arguments, environment: environment)
  }

  /// Runs micloop against these devices and waits for it.
  func micloop(_ arguments: [String]) throws -> MicLoopBinary.Result {
    try startMicloop(arguments).result()
  }

  /// Runs a program to completion with posix_spawn and waitpid (short
  /// helpers: pactl, arecord, aplay) and returns its exit status.
  @discardableResult
  static func wait(for arguments: [String], environment: [String: String]) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
      posix_spawn_file_actions_addopen(
        &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    let pid = try SpawnedProcess.spawn(arguments, environment: environment, actions: &actions)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  }
}
