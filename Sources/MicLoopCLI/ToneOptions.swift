import ArgumentParser
import Console
import MicLoopKit
import TextFormatting
import ToneDecoding
import TonePlans

/// The decoder's decisions as options, shared by `tones`, `loopback --tones`
/// and `plot`.
struct ToneDecisionOptions: ParsableArguments {
  @Option(
    parsing: .unconditional,
    help: "Largest frequency error accepted, in percent (DTMF: accept 1.5, reject 3.5).")
  var tolerance = ToneDetectionSettings().frequencyTolerance * 100
  @Option(
    name: .customLong("min-level-db"), parsing: .unconditional,
    help: "Quietest tone decoded, in dBFS.")
  var minimumLevel = ToneDetectionSettings().minimumLevel
  @Option(
    name: .customLong("min-ms"), parsing: .unconditional,
    help:
      "Shortest DTMF or freq: tone reported, in ms (default 31: 23 ms rejected, 40 ms accepted).")
  var minimumMilliseconds: Double?
  @Option(
    name: .customLong("min-tones"), parsing: .unconditional, help: "Fewest tones in a 5-tone call.")
  var minimumTones = ToneDetectionSettings().minimumSequenceLength

  func validate() throws {
    guard tolerance > 0, tolerance <= 10 else {
      throw ValidationError("--tolerance must be above 0 and at most 10 (percent)")
    }
    guard minimumLevel.isFinite, minimumLevel < 0, minimumLevel >= -150 else {
      throw ValidationError("--min-level-db must be -150 to 0 dBFS, for example -50")
    }
    if let minimumMilliseconds, !(minimumMilliseconds >= 5 && minimumMilliseconds <= 10_000) {
      throw ValidationError("--min-ms must be 5 to 10000")
    }
    guard (1...64).contains(minimumTones) else {
      throw ValidationError("--min-tones must be 1 to 64")
    }
  }

  var settings: ToneDetectionSettings {
    var settings = ToneDetectionSettings()
    settings.frequencyTolerance = tolerance / 100
    settings.minimumLevel = minimumLevel
    settings.minimumDuration = minimumMilliseconds.map { $0 / 1000 }
    settings.minimumSequenceLength = minimumTones
    return settings
  }
}

/// The decisions and what is done with each decoded event, for the jobs
/// that report events (`tones`, `loopback --tones`; `plot` only marks them).
struct ToneReportOptions: ParsableArguments {
  @OptionGroup var decisions: ToneDecisionOptions
  @Option(
    name: .customLong("repeat-window"), parsing: .unconditional,
    help:
      "Report a call identical to one that ended this long before it only once (0 reports every repeat)."
  )
  var repeatWindow = Seconds(3)
  @Option(
    name: .customLong("exec"), parsing: .unconditional,
    help: ArgumentHelp(
      "Run this shell command for each decoded tone and call, with the event in MICLOOP_* environment variables and its JSON line on standard input; decoding never waits for it, and a failing command is reported, not fatal.",
      valueName: "command"))
  var exec: String?

  func validate() throws {
    if let exec, exec.allSatisfy({ $0 == " " || $0 == "\t" }) {
      throw ValidationError(
        "--exec needs a command, for example --exec 'notify-send \"$MICLOOP_TEXT\"'")
    }
    try repeatWindow.require("--repeat-window", atLeast: 0, atMost: 3_600)
  }

  var settings: ToneDetectionSettings { decisions.settings }
}

/// Parses `--plan dtmf,ccir,freq:1750,2100`: names separated by commas; the
/// numbers after `freq:` belong to it.
enum TonePlanList {
  /// The most plans one list may name: each plan costs its own analysis of
  /// every frame, so an absurd list would take minutes and gigabytes.
  static let maximumPlans = 64

  static func parse(_ list: String) throws -> [TonePlan] {
    var names = [String]()
    for token in list.split(separator: ",", omittingEmptySubsequences: true) {
      let token = String(token).trimmingSpaces
      // Numbers after freq: or twotone: belong to it ("twotone:1000,1200:1000,3000").
      if let last = names.last?.lowercased(),
        last.hasPrefix("freq:") || last.hasPrefix("twotone:"),
        let first = token.first, first.isNumber || first == "."
      {
        names[names.count - 1] += "," + token
      } else {
        names.append(token)
      }
      guard names.count <= maximumPlans else {
        throw ValidationError(
          "--plan names at most \(maximumPlans) plans; decode the others in another run")
      }
    }
    guard !names.isEmpty else {
      throw ValidationError("give a plan: \(TonePlan.names)")
    }
    var plans = [TonePlan]()
    for name in names {
      if name.lowercased().hasPrefix("freq:") {
        for value in name.dropFirst(5).split(separator: ",") {
          if let hertz = Double(value), !(hertz >= 20 && hertz <= 100_000) {
            throw ValidationError(
              "freq: tones must be 20 to 100000 Hz, not \(TonePlan.quoted(String(value)))")
          }
        }
      }
      let plan: TonePlan
      do {
        plan = try TonePlan.plan(named: name)
      } catch {
        throw ValidationError(error.description)
      }
      if !plans.contains(where: { $0.name == plan.name }) { plans.append(plan) }
    }
    return plans
  }
}

extension String {
  var trimmingSpaces: String {
    var text = Substring(self)
    while text.first == " " { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    return String(text)
  }
}

/// What a job that reports tones does beside printing them: the
/// `--exec` command for each event, and the summary line. The decoding,
/// repeat suppression and tallies are the library's (`ToneTally`).
/// Control thread.
final class ToneReporting {
  let tones: LiveToneSettings
  /// Print a summary at the end (the tones command; loopback has its own).
  let printsSummary: Bool
  /// The `--exec` command, when given.
  private let hook: EventHook?

  init(plans: [TonePlan], decisions: ToneReportOptions, printsSummary: Bool) {
    hook = decisions.exec.map { EventHook(command: $0) }
    tones = LiveToneSettings(
      plans: plans, detection: decisions.settings, repeatWindow: decisions.repeatWindow.value)
    self.printsSummary = printsSummary
  }

  /// A tally for decoding a file with these settings.
  func makeTally() -> ToneTally { ToneTally(plans: tones.plans, repeatWindow: tones.repeatWindow) }

  /// Runs the `--exec` command for an event that was reported.
  func reported(_ event: ToneDecoderEvent) { hook?.run(event) }

  /// Waits for the `--exec` commands still running (at the end of a job).
  func waitForCommands() { hook?.finish() }

  /// Looks after the `--exec` commands between events (control loop).
  func pollCommands() { hook?.poll() }

  static func summaryLine(_ tally: ToneTally, duration: Double, xruns: Int? = nil) -> String {
    let tones = tally.toneCount
    let sequences = tally.sequenceCount
    return
      "Decoded \(tones) tone\(tones == 1 ? "" : "s") and \(sequences) sequence\(sequences == 1 ? "" : "s") in \(DecimalFormatting.fixed(duration, places: 2)) s"
      + (xruns.map { ", \($0) xruns" } ?? "")
  }
}
