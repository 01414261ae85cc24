import Console
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `--exec`'s command for each decoded tone and call: `/bin/sh -c
/// COMMAND` with the event in `MICLOOP_*` environment variables and its
/// JSON line on standard input. The command's standard output goes to
/// micloop's standard error, so micloop's own output stays a clean stream
/// of events; it inherits no descriptor of micloop's but those three.
///
/// Decoding never waits for a command: each starts at once and runs beside
/// the others, at most `maximumRunning`. Past that a call (a sequence, a
/// page, a siren signal) waits in a queue for a free slot and is never
/// dropped for tones; a single tone's command is skipped, and said so. A
/// command still running after `timeout` seconds is stopped (its whole
/// process group: SIGTERM, then SIGKILL after `killGrace`), and failures
/// are reported on standard error, never fatal. `finish` runs what is
/// queued and waits for the rest; a stop request while it waits stops them.
/// Control thread only.
final class EventHook {
  static let maximumRunning = 16
  /// Seconds a command may run before it is stopped.
  static let timeout = 10.0
  /// Seconds between SIGTERM and SIGKILL for a command being stopped.
  static let killGrace = 2.0
  /// Calls held while every slot is busy; more than this many waiting
  /// means commands cannot keep up at all, and the oldest are dropped.
  static let maximumQueued = 1_000
  /// How often `finish` looks at its commands while it waits.
  static let finishPoll: useconds_t = 20_000
  let command: String
  private struct Running {
    let pid: pid_t
    let label: String
    let started: Double
    var terminated: Double?
  }
  private var running: [Running] = []
  private var queued: [ToneDecoderEvent] = []

  init(command: String) { self.command = command }

  /// Starts the command for `event` (or queues it, for a call, while every
  /// slot is busy) and looks after the commands running.
  func run(_ event: ToneDecoderEvent) {
    poll()
    if running.count < Self.maximumRunning {
      start(event)
    } else if Self.isCall(event) {
      if queued.count >= Self.maximumQueued {
        complain("\(queued.count) calls waiting; not run for \(Self.label(queued.removeFirst()))")
      }
      queued.append(event)
    } else {
      complain("\(Self.maximumRunning) commands still running; not run for \(Self.label(event))")
    }
  }

  /// Collects ended commands, stops overdue ones and starts queued calls in
  /// the slots that freed; cheap enough for every cycle of a control loop.
  func poll() {
    collect()
    stopOverdue(now: Self.now())
    while running.count < Self.maximumRunning, !queued.isEmpty { start(queued.removeFirst()) }
  }

  /// Runs the queued calls and waits for every command; a stop request
  /// (Ctrl-C, SIGTERM) that arrives meanwhile stops them all at once.
  func finish() {
    poll()
    guard !running.isEmpty || !queued.isEmpty else { return }
    let count = running.count + queued.count
    complain("waiting for \(count) command\(count == 1 ? "" : "s") still running")
    let requests = SignalTrap.requests.load(ordering: .relaxed)
    while !running.isEmpty || !queued.isEmpty {
      if SignalTrap.requests.load(ordering: .relaxed) != requests {
        if !queued.isEmpty {
          complain("stopped: \(queued.count) queued call\(queued.count == 1 ? "" : "s") not run")
          queued.removeAll()
        }
        let now = Self.now()
        for index in running.indices where running[index].terminated == nil {
          terminate(&running[index], now: now)
        }
      }
      usleep(Self.finishPoll)
      poll()
    }
  }

  private func start(_ event: ToneDecoderEvent) {
    let label = Self.label(event)
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else {
      complain("cannot make a pipe for \(label) (\(String(cString: strerror(errno))))")
      return
    }
    // Neither end may leak into other commands.
    _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
    guard let pid = spawn(input: ends[0], variables: Self.variables(event)) else {
      close(ends[0])
      close(ends[1])
      complain("cannot start /bin/sh for \(label) (\(String(cString: strerror(errno))))")
      return
    }
    close(ends[0])
    // A JSON line is far smaller than a pipe's buffer: this never blocks.
    // A command that does not read its input closes the pipe: ignored.
    Self.writeAll(ToneEventFormat.json(event) + "\n", to: ends[1])
    close(ends[1])
    running.append(Running(pid: pid, label: label, started: Self.now()))
  }

  private func complain(_ text: String) {
    StandardOutput.writeError("micloop: --exec: \(text)")
  }

  /// Whether `event` is a call, which is queued rather than skipped.
  private static func isCall(_ event: ToneDecoderEvent) -> Bool {
    switch event {
    case .sequence, .page: true
    case .tone, .toneStart: false
    }
  }

  /// Stops the commands that have run past `timeout`, and kills those that
  /// outlived their grace.
  private func stopOverdue(now: Double) {
    for index in running.indices {
      if let terminated = running[index].terminated {
        if now - terminated >= Self.killGrace { kill(-running[index].pid, SIGKILL) }
      } else if now - running[index].started >= Self.timeout {
        complain(
          "the command for \(running[index].label) ran \(Int(Self.timeout)) s; stopping it")
        terminate(&running[index], now: now)
      }
    }
  }

  private func terminate(_ command: inout Running, now: Double) {
    kill(-command.pid, SIGTERM)
    command.terminated = now
  }

  /// Collects ended commands and reports failures (not those it stopped).
  private func collect() {
    var index = 0
    while index < running.count {
      var status: Int32 = 0
      let result = waitpid(running[index].pid, &status, WNOHANG)
      if result == 0 || (result < 0 && errno == EINTR) {
        if result == 0 { index += 1 }
        continue
      }
      let ended = running.remove(at: index)
      guard result > 0, ended.terminated == nil else { continue }
      let signal = status & 0x7f
      let code = (status >> 8) & 0xff
      if signal != 0 {
        complain("the command for \(ended.label) was killed by signal \(signal)")
      } else if code != 0 {
        complain("the command for \(ended.label) exited with status \(code)")
      }
    }
  }

  /// Starts `/bin/sh -c command` in a process group of its own, with
  /// `input` as its standard input, its standard output on standard error,
  /// no other descriptor of micloop's (an input file, a recording), default
  /// signal handling and the environment plus `variables`.
  private func spawn(input: Int32, variables: [String]) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input, 0)
    posix_spawn_file_actions_adddup2(&actions, 2, 1)
    Self.closeOtherDescriptors(&actions)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // micloop ignores SIGPIPE and blocks signals on some threads; a
    // command gets the defaults.
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setsigmask(&attributes, &mask)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
    var environment = [String]()
    var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
    while let pointer = entry?.pointee {
      let text = String(cString: pointer)
      if !text.hasPrefix("MICLOOP_") { environment.append(text) }
      entry = entry?.successor()
    }
    var pid: pid_t = 0
    let status = Self.withCStrings(["/bin/sh", "-c", command]) { arguments in
      Self.withCStrings(environment + variables) { environment in
        posix_spawn(&pid, "/bin/sh", &actions, &attributes, arguments, environment)
      }
    }
    if status != 0 {
      errno = status
      return nil
    }
    return pid
  }

  /// The environment variables describing `event`.
  static func variables(_ event: ToneDecoderEvent) -> [String] {
    switch event {
    case .tone(let tone), .toneStart(let tone):
      let name = if case .toneStart = event { "tone_start" } else { "tone" }
      return [
        "MICLOOP_EVENT=\(name)", "MICLOOP_PLAN=\(tone.plan)",
        "MICLOOP_TIME=\(DecimalFormatting.fixed(tone.time, places: 3))",
        "MICLOOP_DURATION=\(DecimalFormatting.fixed(tone.duration, places: 3))",
        "MICLOOP_SYMBOL=\(tone.symbol)",
        "MICLOOP_FREQUENCIES=\(tone.frequencies.map { DecimalFormatting.fixed($0, places: 1) }.joined(separator: ","))",
        "MICLOOP_LEVEL_DBFS=\(tone.levels.max().map { DecimalFormatting.fixed($0, places: 1) } ?? "")",
      ]
    case .sequence(let sequence):
      return [
        "MICLOOP_EVENT=sequence", "MICLOOP_PLAN=\(sequence.plan)",
        "MICLOOP_TIME=\(DecimalFormatting.fixed(sequence.time, places: 3))",
        "MICLOOP_DURATION=\(DecimalFormatting.fixed(sequence.duration, places: 3))",
        "MICLOOP_TEXT=\(sequence.text)", "MICLOOP_SYMBOLS=\(sequence.symbols)",
      ] + (sequence.call.map { ["MICLOOP_CALL=\($0)"] } ?? [])
    case .page(let page):
      return [
        "MICLOOP_EVENT=page", "MICLOOP_PLAN=\(page.plan)",
        "MICLOOP_TIME=\(DecimalFormatting.fixed(page.time, places: 3))",
        "MICLOOP_DURATION=\(DecimalFormatting.fixed(page.duration, places: 3))",
        "MICLOOP_FREQUENCIES=\(page.frequencies.map { DecimalFormatting.fixed($0, places: 1) }.joined(separator: ","))",
        "MICLOOP_GROUP=\(page.isGroupCall ? 1 : 0)",
      ]
    }
  }

  /// How an event is named in a report.
  static func label(_ event: ToneDecoderEvent) -> String {
    switch event {
    case .tone(let tone):
      return
        "the \(tone.plan) tone \(tone.symbol) at \(DecimalFormatting.fixed(tone.time, places: 3)) s"
    case .toneStart(let tone):
      return
        "the start of the \(tone.plan) tone \(tone.symbol) at \(DecimalFormatting.fixed(tone.time, places: 3)) s"
    case .sequence(let sequence):
      return
        "the \(sequence.plan) \(sequence.plan == "handshake" ? "text" : sequence.plan == "siren" ? "signal" : "call") \"\(sequence.text)\" at \(DecimalFormatting.fixed(sequence.time, places: 3)) s"
    case .page(let page):
      return
        "the \(page.isGroupCall ? "group page" : "page") \(page.plan) at \(DecimalFormatting.fixed(page.time, places: 3)) s"
    }
  }

  private typealias CloseFrom =
    @convention(c) (
      UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32
    ) -> Int32

  /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; not
  /// in the Swift overlay), looked up once.
  nonisolated(unsafe) private static let closeFrom: CloseFrom? = dlsym(
    UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
  ).map { unsafeBitCast($0, to: CloseFrom.self) }

  /// Makes the command start with descriptors 0, 1 and 2 only: a file
  /// micloop reads or records must not stay open in it.
  private static func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    if let closeFrom, closeFrom(&actions, 3) == 0 { return }
    // Older C libraries: mark every open descriptor close-on-exec.
    guard let directory = opendir("/proc/self/fd") else { return }
    defer { closedir(directory) }
    let own = dirfd(directory)
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      if let descriptor = Int32(name), descriptor > 2, descriptor != own {
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
      }
    }
  }

  private static func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeMutableBytes {
        write(descriptor, $0.baseAddress! + offset, $0.count - offset)
      }
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return }
      offset += written
    }
  }

  private static func withCStrings<Result>(
    _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result
  ) -> Result {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
  }

  private static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
