import ArgumentParser
import Console
import MicLoopKit
import SignalDSP
import TextFormatting
import TonePlans

/// `micloop send`: encode text with a tone plan (DTMF, 5-tone, Handshake …).
struct Send: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "send",
    abstract: "Send text as signalling tones (DTMF, 5-tone selective call, Handshake …).",
    discussion: """
      Plans: \(TonePlan.names). Each plan's standard timing is used unless \
      --tone-ms or --gap-ms say otherwise. In 5-tone plans a repeated digit is \
      sent as the repeat tone E. Symbols a plan cannot send are refused, all named.
      """)

  @Option(help: "Tone plan: \(TonePlan.names).")
  var plan: String
  @Argument(help: "What to send, e.g. 123# (DTMF), 12345 (5-tone), hello (Handshake).")
  var text: String
  @Option(
    name: .customLong("tone-ms"), parsing: .unconditional,
    help: "Length of each tone in ms (default: the plan's).")
  var toneMilliseconds: Double?
  @Option(
    name: .customLong("gap-ms"), parsing: .unconditional,
    help: "Pause after each tone in ms (default: the plan's).")
  var gapMilliseconds: Double?
  @Option(
    name: .customLong("level-db"), parsing: .unconditional, help: "Peak level of each tone in dBFS."
  )
  var levelDecibels = -10.0
  @Option(
    name: [.customShort("o"), .long],
    help: "Write to this file (.wav, .flac …) instead of a device.")
  var output: String?
  @OptionGroup(title: "Devices") var devices: DeviceOptions

  func validate() throws {
    do {
      _ = try TonePlan.plan(named: plan)
    } catch {
      throw ValidationError(error.description)
    }
    if let toneMilliseconds, !(toneMilliseconds >= 10 && toneMilliseconds <= 10_000) {
      throw ValidationError("--tone-ms must be 10 to 10000")
    }
    if let gapMilliseconds, !(gapMilliseconds >= 0 && gapMilliseconds <= 10_000) {
      throw ValidationError("--gap-ms must be 0 to 10000")
    }
    let isDualTone = TonePlan.named(plan)?.soundsTwoTones == true
    let loudest = isDualTone ? -6.03 : 0
    guard levelDecibels.isFinite, levelDecibels <= loudest, levelDecibels >= -120 else {
      throw ValidationError(
        "--level-db must be -120 to \(loudest) dBFS\(isDualTone ? " (two tones sound at once)" : "")"
      )
    }
    if output != nil && (devices.device != nil || devices.playback != nil) {
      throw ValidationError("use either --output FILE or -D DEVICE, not both")
    }
  }

  func run() throws {
    let plan = TonePlan.named(plan)!
    let segments: [ToneSegment]
    do {
      segments = try plan.schedule(
        for: text, sampleRate: Double(devices.rate),
        toneDuration: toneMilliseconds.map { $0 / 1000 },
        gapDuration: gapMilliseconds.map { $0 / 1000 })
    } catch { throw CommandFailure(message: error.commandLineMessage()) }
    let source = ToneSource(
      segments: segments, amplitude: Float(Decibels.amplitude(levelDecibels)),
      sampleRate: devices.rate,
      channelCount: devices.channels)
    let symbols = String(segments.map(\.symbol).filter { $0 != "^" })
    let seconds = DecimalFormatting.fixed(
      Double(source.totalFrames ?? 0) / Double(devices.rate), places: 3)
    if let output {
      let written = try TonePlayback.write(source, to: output)
      StandardOutput.write(
        "Wrote \(plan.name) \"\(symbols)\", \(written) frames (\(seconds) s) to \(output)")
      return
    }
    let configuration = devices.configuration(.playback)
    try TonePlayback.play(
      source, configuration: configuration,
      announce:
        "Sending \(plan.name) \"\(symbols)\" (\(seconds) s) on \(configuration.playbackDevice)")
  }
}
