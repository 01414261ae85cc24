import ArgumentParser
import AudioFiles
import Console
import DuplexIO
import FeedbackControl
import Metering
import MicLoopKit
import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop loopback`: microphone to speaker with gain, meter and recording.
struct Loopback: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "loopback",
    abstract: "Monitor the microphone on the speaker, with gain, a live meter and recording.",
    discussion: """
      Keys on a terminal: up/down arrow (or +/-) change the gain by 1 dB, m mutes, q quits. \
      Ctrl-C stops cleanly; a recording stays valid. A feedback guard (on by default) notches \
      howls as they grow and ducks the output as a last resort. It learns the loop from what it \
      plays and hears, and when the gain jumps it sets the notches the new gain needs at once \
      (--learn-loop); given the loop's measured response (--ring-out), it does so for any \
      gain the moment the gain gets there. \
      With --input and --room the job \
      runs in a simulated room instead: its microphone hears the input plus the speaker through \
      the room's impulse response, as fast as the processor allows.
      """)

  @OptionGroup(title: "Devices") var devices: DeviceOptions
  @Option(
    name: .customLong("gain-db"), parsing: .unconditional,
    help:
      "Gain from microphone to speaker in dB; or gains over time, e.g. -6,3@4 (-6 dB, then +3 dB from 4 s)."
  )
  var gain = GainSchedule(initial: 0)
  @Option(
    name: .customLong("feedback-guard"),
    help: "Notch howls as they grow, duck the output as a last resort: on or off.")
  var feedbackGuard = Switch.on
  @Option(
    name: .customLong("ring-out"),
    help:
      "The loop's impulse response, as 'micloop latency --save-ir' saves it (same devices and period), or 'measure' to measure it first (about 6 s of chirps and a sweep at -12 dBFS on the speaker): the guard notches each frequency ahead as the gain brings it near howling."
  )
  var ringOut: String?
  @Option(
    name: .customLong("learn-loop"),
    help:
      "Learn the loop from what the speaker plays and the microphone hears while the guard is idle, and notch ahead what a gain jump brings near howling: on or off (without --ring-out)."
  )
  var learnLoop = Switch.on
  @Option(help: "With --room: the talker the simulated room's microphone hears (a file).")
  var input: String?
  @Option(
    help:
      "Run in a simulated room instead of on devices: its impulse response from speaker to microphone (a file, e.g. Tests/Fixtures/rooms/living.wav); needs --input."
  )
  var room: String?
  @Flag(
    name: .customLong("no-limit"),
    help: "Do not soft-limit the output (it is still clipped, never wrapped).")
  var noLimit = false
  @Flag(help: "Show the live meter.")
  var meter = false
  @Flag(help: "Print JSON Lines (meter events, xruns, summary).")
  var json = false
  @Option(help: "Save the captured input losslessly to this file (.wav, .flac …).")
  var record: String?
  @Option(parsing: .unconditional, help: "Stop after this long (e.g. 30, 30s, 1500ms).")
  var duration: Seconds?
  @Option(help: "Decode these tone plans while monitoring (e.g. dtmf or dtmf,ccir).")
  var tones: String?
  @OptionGroup(title: "Talk detection") var talk: TalkOptions
  @OptionGroup(title: "Tone decisions (with --tones)") var decisions: ToneReportOptions
  @OptionGroup(title: "Monitoring station") var station: StationOptions

  func validate() throws {
    try gain.validate("--gain-db")
    if room != nil && station.http != nil {
      throw ValidationError("--http serves a job on real devices; leave out --room or --http")
    }
    try duration?.require("--duration", atLeast: 0.001)
    if let tones { _ = try TonePlanList.parse(tones) }
    if ringOut != nil && feedbackGuard == .off {
      throw ValidationError(
        "--ring-out sets the feedback guard's notches ahead; leave out --feedback-guard off")
    }
    guard (input == nil) == (room == nil) else {
      throw ValidationError(
        "--input and --room go together: a talker played in a simulated room (e.g. --input talk.wav --room Tests/Fixtures/rooms/living.wav)"
      )
    }
    if room != nil {
      guard devices.device == nil && devices.capture == nil && devices.playback == nil else {
        throw ValidationError(
          "--room runs on simulated devices; leave out -D, --capture and --playback")
      }
      guard tones == nil, !devices.reconnect else {
        throw ValidationError("--room does not take --tones or --reconnect")
      }
    }
  }

  func run() throws {
    var settings = LiveSettings()
    settings.gainDecibels = gain.initial
    settings.gainChanges = gain.changes
    settings.feedbackGuard = feedbackGuard == .on ? HowlGuardSettings() : nil
    settings.feedbackLearning = learnLoop == .on
    var configuration = devices.configuration(.duplex)
    if let ringOut, let guardSettings = settings.feedbackGuard {
      let made =
        ringOut == RingOutFile.measure
        ? try RingOutFile.measured(
          room: room, configuration: configuration, devices: devices, settings: guardSettings)
        : try RingOutFile.plan(ringOut, settings: guardSettings)
      guard let plan = made else { return }
      if room == nil { configuration.sampleRate = plan.rate }
      settings.feedbackRingOut = plan.plan
      StandardOutput.write(
        json ? FeedbackEventFormat.json(plan.plan) : FeedbackEventFormat.text(plan.plan),
        flush: true)
    }
    settings.isLimiting = !noLimit
    settings.isRecording = record != nil
    if meter || json || station.http != nil {
      var meterSettings = MeterSettings()
      meterSettings.talk = talk.settings
      meterSettings.interval = StandardOutput.isTerminal && !json ? 0.05 : 0.1
      settings.meter = meterSettings
    } else {
      settings.meter = nil
    }
    if let room, let input {
      try RoomRunner.run(
        configuration: configuration, settings: settings,
        room: room, talker: input, record: record, duration: duration?.value, json: json,
        showsMeter: meter || json)
      return
    }
    try LiveRunner.run(
      configuration: configuration, settings: settings,
      record: record,
      duration: duration?.value, json: json, showsMeter: meter || json, acceptsKeys: true,
      tones: try tones.map {
        ToneReporting(
          plans: try TonePlanList.parse($0), decisions: decisions, printsSummary: false)
      }, recovery: devices.recovery, station: station)
  }
}

/// Environment switches read once (control thread).
enum ProcessInfoLite {
  static var isVerbose: Bool { getenvString("MICLOOP_VERBOSE") != nil }
  static func getenvString(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }
}
