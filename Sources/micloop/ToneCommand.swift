import ArgumentParser
import DuplexIO
import MicLoopKit
import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// `micloop tone`: a bench tone generator on a playback device or into a file.
struct Tone: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Play one or more sine tones on a device, or write them to a file.",
    discussion: """
      Tones fade in and out over 5 ms (raised cosine), so they never click. \
      Give --frequency up to four times for a chord (DTMF uses two). \
      On a device the tone plays until Ctrl-C or --duration; a file needs --duration.
      """)

  @Option(
    name: [.customShort("f"), .long], help: "Tone frequency in Hz (repeat for several tones).")
  var frequency: [Double] = []
  @Option(
    name: .customLong("level-db"), parsing: .unconditional, help: "Peak level of each tone in dBFS."
  )
  var levelDecibels = -12.0
  @Option(help: "Length (e.g. 2, 2s, 500ms); on a device, until Ctrl-C without it.")
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
    guard levelDecibels.isFinite, levelDecibels <= 0 else {
      throw ValidationError("--level-db must be 0 dBFS or lower, for example --level-db -12")
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
    if let duration, duration.value <= 0 { throw ValidationError("--duration must be more than 0") }
  }

  func run() throws {
    let amplitude = Float(Decibels.amplitude(levelDecibels))
    let tones = frequency.map { (frequency: $0, amplitude: amplitude) }
    let description = frequency.map { "\(DecimalFormatting.fixed($0, places: 2)) Hz" }.joined(
      separator: " + ")
    if let output { return try writeFile(output, tones: tones, description: description) }
    try play(tones: tones, description: description)
  }

  private func writeFile(
    _ path: String, tones: [(frequency: Double, amplitude: Float)], description: String
  ) throws {
    let rate = devices.rate
    let channels = devices.channels
    let source = ToneSource(
      tones: tones, sampleRate: rate, channelCount: channels, duration: duration?.value,
      maximumPeriod: 4096)
    let writer: AudioFileWriter
    do {
      writer = try AudioFileWriter(path: path, sampleRate: Double(rate), channelCount: channels)
    } catch { throw CommandFailure(message: error.description) }
    defer { writer.close() }
    let total = source.totalFrames ?? 0
    var block = [Float](repeating: 0, count: 4096 * channels)
    var written = 0
    while written < total {
      let count = min(4096, total - written)
      block.withUnsafeMutableBufferPointer {
        source.render(into: $0.baseAddress!, frameCount: count)
      }
      do {
        try block.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frameCount: count) }
      } catch let error as AudioFileError { throw CommandFailure(message: error.description) }
      written += count
    }
    StandardOutput.write(
      "Wrote \(description) at \(DecimalFormatting.fixed(levelDecibels, places: 1)) dBFS, \(written) frames (\(DecimalFormatting.fixed(Double(written) / Double(rate), places: 3)) s) to \(path)"
    )
  }

  private func play(tones: [(frequency: Double, amplitude: Float)], description: String) throws {
    SignalTrap.install()
    let configuration = devices.configuration(input: false, output: true)
    let source = ToneSource(
      tones: tones, sampleRate: configuration.sampleRate,
      channelCount: configuration.outputChannelCount,
      duration: duration?.value, maximumPeriod: 4096)
    let unit = DuplexUnit(configuration: configuration, client: source)
    do {
      try unit.initialize()
      try unit.start()
    } catch { throw CommandFailure(message: error.description) }
    StandardOutput.write(
      "Playing \(description) at \(DecimalFormatting.fixed(levelDecibels, places: 1)) dBFS on \(configuration.playbackDevice)"
        + (duration.map { " for \(DecimalFormatting.fixed($0.value, places: 3)) s" }
          ?? " (Ctrl-C stops)"),
      flush: true)
    while unit.isRunning && !source.isDone.load(ordering: .acquiring) {
      if interruptRequested.load(ordering: .relaxed) { source.requestStop() }
      usleep(10_000)
    }
    // Let what is queued be heard before closing.
    unit.stopAfterDrain()
    if let failure = unit.failure { throw CommandFailure(message: failure.description) }
  }
}
