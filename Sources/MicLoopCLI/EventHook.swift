import Console
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `--exec`'s command for each decoded tone and call: `/bin/sh -c
/// COMMAND` with the event in `MICLOOP_*` environment variables and its
/// JSON line on standard input. The command's standard output goes to
/// micloop's standard error, so micloop's own output stays a clean stream
/// of events.
///
/// Decoding never waits for a command: each starts at once and runs beside
/// the others (at most `maximumRunning`; past that an event's command is
/// skipped, and said so). A command that fails or takes longer than
/// `slowSeconds` is reported on standard error, never fatal. `finish`
/// waits for the commands still running. Control thread only.
final class EventHook {
  static let maximumRunning = 16
  static let slowSeconds = 10.0
  let command: String
  private var running: [(pid: pid_t, label: String, started: Double)] = []

  init(command: String) { self.command = command }

  /// Starts the command for `event` and collects the ones that ended.
  func run(_ event: ToneDecoderEvent) {
    collect(waiting: false)
    let label = Self.label(event)
    guard running.count < Self.maximumRunning else {
      complain("\(Self.maximumRunning) commands still running; not run for \(label)")
      return
    }
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
    running.append((pid, label, Self.now()))
  }

  /// Waits for every command still running.
  func finish() {
    guard !running.isEmpty else { return }
    complain(
      "waiting for \(running.count) command\(running.count == 1 ? "" : "s") still running")
    collect(waiting: true)
  }

  private func complain(_ text: String) {
    StandardOutput.writeError("micloop: --exec: \(text)")
  }

  /// Collects ended commands, reporting failures and slow ones; with
  /// `waiting`, until none is left.
  private func collect(waiting: Bool) {
    var index = 0
    while index < running.count {
      var status: Int32 = 0
      let result = waitpid(running[index].pid, &status, waiting ? 0 : WNOHANG)
      if result == 0 || (result < 0 && errno == EINTR) {
        if result == 0 { index += 1 }
        continue
      }
      let ended = running.remove(at: index)
      guard result > 0 else { continue }
      let seconds = Self.now() - ended.started
      let signal = status & 0x7f
      let code = (status >> 8) & 0xff
      if signal != 0 {
        complain("the command for \(ended.label) was killed by signal \(signal)")
      } else if code != 0 {
        complain("the command for \(ended.label) exited with status \(code)")
      }
      if seconds > Self.slowSeconds {
        complain(
          "the command for \(ended.label) took \(DecimalFormatting.fixed(seconds, places: 1)) s")
      }
    }
  }

  /// Starts `/bin/sh -c command` with `input` as its standard input, its
  /// standard output on standard error, default signal handling and the
  /// environment plus `variables`.
  private func spawn(input: Int32, variables: [String]) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input, 0)
    posix_spawn_file_actions_adddup2(&actions, 2, 1)
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
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
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
