import ArgumentParser
import MicLoopKit
import SignalDSP

/// Options of the talk detector, shared by every command that detects talk.
struct TalkOptions: ParsableArguments {
  @Option(help: "Envelope attack time (e.g. 5ms).")
  var attack = Seconds(TalkDetectorSettings().attackTime)
  @Option(help: "Envelope release time (e.g. 40ms).")
  var release = Seconds(TalkDetectorSettings().releaseTime)
  @Option(parsing: .unconditional, help: "Talk starts this many dB above the noise floor (dBFS with --absolute).")
  var open = TalkDetectorSettings().openThreshold
  @Option(parsing: .unconditional, help: "Talk may end this many dB above the noise floor (dBFS with --absolute).")
  var close = TalkDetectorSettings().closeThreshold
  @Option(help: "Time the envelope must stay below --close before talk ends.")
  var hold = Seconds(TalkDetectorSettings().holdTime)
  @Flag(help: "Treat --open and --close as absolute dBFS instead of dB above the noise floor.")
  var absolute = false

  func validate() throws {
    guard open.isFinite, close.isFinite else {
      throw ValidationError("--open and --close must be numbers of dB")
    }
    guard close <= open else {
      throw ValidationError("--close (\(close)) must not be above --open (\(open)); lower --close")
    }
    if absolute && open > 0 {
      throw ValidationError(
        "--open \(open) dBFS is above full scale; use a negative value with --absolute")
    }
  }

  var settings: TalkDetectorSettings {
    var settings = TalkDetectorSettings()
    settings.attackTime = attack.value
    settings.releaseTime = release.value
    settings.openThreshold = open
    settings.closeThreshold = close
    settings.holdTime = hold.value
    settings.isAbsolute = absolute
    return settings
  }
}

/// `micloop meter`: peak and RMS dBFS with talk/silence, from a file.
struct Meter: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Measure peak and RMS levels (dBFS) and detect talk/silence.",
    discussion: """
      Prints a line per interval with a level bar, peak and RMS dBFS and TALK/silence, \
      then the talk segments and totals. --json prints JSON Lines ending with a summary.
      """)

  @Option(
    name: [.short, .long], help: "Audio file to meter (WAV, FLAC, OGG …); - reads a WAV from stdin."
  )
  var input: String
  @Flag(help: "Print JSON Lines instead of text.")
  var json = false
  @Option(help: "Time between level readings.")
  var interval = Seconds(0.1)
  @Option(help: "Meter only this channel (1 = first); default: every channel, report the loudest.")
  var channel: Int?
  @Flag(help: "Report RMS with the AES17 convention (full-scale sine = 0 dB RMS).")
  var aes17 = false
  @OptionGroup(title: "Talk detection")
  var talk: TalkOptions

  func validate() throws {
    guard interval.value >= 0.001 else { throw ValidationError("--interval must be at least 1ms") }
    if let channel, channel < 1 {
      throw ValidationError("--channel counts from 1; use --channel 1 for the first channel")
    }
  }

  func run() throws {
    let reader: AudioFileReader
    do { reader = try AudioFileReader(path: input) } catch {
      throw CommandFailure(message: error.description)
    }
    var settings = MeterSettings()
    settings.interval = interval.value
    settings.talk = talk.settings
    settings.rmsConvention = aes17 ? .aes17 : .sox
    if let channel {
      guard channel <= reader.channelCount else {
        throw CommandFailure(
          message:
            "--channel \(channel): \(input) has \(reader.channelCount) channel\(reader.channelCount == 1 ? "" : "s"); pick 1 to \(reader.channelCount)"
        )
      }
      settings.channel = channel - 1
    }
    let human = HumanMeterFormat()
    var segments = [(start: Double, end: Double)]()
    var openStart: Double?
    let outcome: FileMeter.Outcome
    do {
      outcome = try FileMeter.run(reader, settings: settings) { event in
        if json {
          StandardOutput.write(JSONLines.line(for: event), flush: true)
          return
        }
        switch event {
        case .level(let reading): StandardOutput.write(human.line(for: reading))
        case .talkStart(let time): openStart = time
        case .talkEnd(let time):
          segments.append((openStart ?? time, time))
          openStart = nil
        case .summary(let summary):
          for line in human.summaryLines(summary, segments: segments) { StandardOutput.write(line) }
        }
      }
    } catch {
      throw CommandFailure(message: error.description)
    }
    if let problem = outcome.problem {
      throw CommandFailure(message: problem.description, status: 65)
    }
    if outcome.summary.invalidSamples > 0 {
      throw CommandFailure(
        message:
          "\(input): \(outcome.summary.invalidSamples) NaN or infinite samples were ignored; the levels cover the valid samples; the file is damaged, re-export it",
        status: 65)
    }
  }
}
