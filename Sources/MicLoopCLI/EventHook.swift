import Console
import TextFormatting
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `--exec`'s command for each decoded tone and call (`HookRunner`),
/// with the event in `MICLOOP_*` environment variables and its JSON line on
/// standard input. Calls (a sequence, a page, a siren signal) wait for a
/// free slot when every one is busy; a single tone's command is skipped,
/// and said so. A command runs at most `timeout` seconds. Control thread only.
final class EventHook {
  /// Seconds a command may run before it is stopped.
  static let timeout = 10.0
  private let runner: HookRunner

  init(command: String) {
    runner = HookRunner(command: command, option: "--exec", timeout: Self.timeout)
  }

  var command: String { runner.command }

  /// Starts the command for `event` (or queues it, for a call, while every
  /// slot is busy) and looks after the commands running.
  func run(_ event: ToneDecoderEvent) {
    runner.run(
      HookRunner.Run(
        label: Self.label(event), variables: Self.variables(event),
        input: ToneEventFormat.json(event), isQueued: Self.isCall(event)))
  }

  /// Collects ended commands, stops overdue ones and starts queued calls.
  func poll() { runner.poll() }

  /// Runs the queued calls and waits for every command.
  func finish() { runner.finish() }

  /// Whether `event` is a call, which is queued rather than skipped.
  private static func isCall(_ event: ToneDecoderEvent) -> Bool {
    switch event {
    case .sequence, .page: true
    case .tone, .toneStart: false
    }
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
        "the \(sequence.plan) \(sequence.kind.sequenceNoun) \"\(sequence.text)\" at \(DecimalFormatting.fixed(sequence.time, places: 3)) s"
    case .page(let page):
      return
        "the \(page.isGroupCall ? "group page" : "page") \(page.plan) at \(DecimalFormatting.fixed(page.time, places: 3)) s"
    }
  }
}
