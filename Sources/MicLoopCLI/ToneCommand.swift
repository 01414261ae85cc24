import ArgumentParser
import Console
import MicLoopKit
import SignalDSP
import TextFormatting
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop tone`: a bench tone generator on a playback device or into a file.
struct Tone: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "tone",
    abstract: "Play one or more sine tones on a device, or write them to a file.",
    discussion: """
      Tones fade in and out over 5 ms (raised cosine), so they never click. \
      Give --frequency up to four times for a chord (DTMF uses two). \
      On a device the tone plays until Ctrl-C or --duration; a file needs --duration.
      """)

  @Option(
    name: [.customShort("f"), .long], parsing: .unconditionalSingleValue,
    help: "Tone frequency in Hz (repeat for several tones).")
  var frequency: [Double] = []
  @Option(
    name: .customLong("level-db"), parsing: .unconditional, help: "Peak level of each tone in dBFS."
  )
  var levelDecibels = -12.0
  @Option(
    parsing: .unconditional,
    help: "Length (e.g. 2, 2s, 500ms); on a device, until Ctrl-C without it.")
  var duration: Seconds?
  @Option(
    name: [.customShort("o"), .long],
    help: "Write to this file (.wav, .flac, .ogg …) instead of a device.")
  var output: String?
  @OptionGroup(title: "Devices") var devices: DeviceOptions

  func validate() throws {
    guard !frequency.isEmpty else {
      throw ValidationError("give at least one --frequency, for example --frequency 1000")
    }
    guard frequency.count <= ToneGenerator.maximumTones else {
      throw ValidationError("at most \(ToneGenerator.maximumTones) --frequency values at once")
    }
    let nyquist = Double(devices.rate) / 2
    for value in frequency where !(value > 0 && value < nyquist) {
      throw ValidationError(
        "--frequency \(value) Hz cannot be played at \(devices.rate) Hz; use 0 < f < \(Int(nyquist)) Hz or raise --rate"
      )
    }
    guard levelDecibels.isFinite, levelDecibels <= 0, levelDecibels >= -120 else {
      throw ValidationError("--level-db must be -120 to 0 dBFS, for example --level-db -12")
    }
    let peak = Double(frequency.count) * Decibels.amplitude(levelDecibels)
    if peak > 1.0001 {
      throw ValidationError(
        "\(frequency.count) tones at \(levelDecibels) dBFS add up to more than full scale; use --level-db \(DecimalFormatting.fixed(Decibels.fromAmplitude(1 / Double(frequency.count)) ?? -6, places: 1)) or lower"
      )
    }
    if output != nil && duration == nil {
      throw ValidationError("a file needs a length: add --duration, for example --duration 2")
    }
    if output != nil && (devices.device != nil || devices.playback != nil) {
      throw ValidationError("use either --output FILE or -D DEVICE, not both")
    }
    try duration?.require("--duration", atLeast: 0.001)
  }

  func run() throws {
    let segment = ToneSegment(
      symbol: "~", frequencies: frequency, duration: duration?.value ?? .infinity, gap: 0)
    let source = ToneSource(
      segments: [segment], amplitude: Float(Decibels.amplitude(levelDecibels)),
      sampleRate: devices.rate,
      channelCount: devices.channels)
    let description = frequency.map { "\(DecimalFormatting.fixed($0, places: 2)) Hz" }.joined(
      separator: " + ")
    let level = "\(DecimalFormatting.fixed(levelDecibels, places: 1)) dBFS"
    if let output {
      let written = try TonePlayback.write(source, to: output)
      StandardOutput.write(
        "Wrote \(description) at \(level), \(written) frames (\(DecimalFormatting.fixed(Double(written) / Double(devices.rate), places: 3)) s) to \(output)"
      )
      return
    }
    let configuration = devices.configuration(.playback)
    try TonePlayback.play(
      source, configuration: configuration,
      announce: "Playing \(description) at \(level) on \(configuration.playbackDevice)"
        + (duration.map { " for \(DecimalFormatting.fixed($0.value, places: 3)) s" }
          ?? " (Ctrl-C stops)"))
  }
}
