import ArgumentParser
import AudioFiles
import Console
import Plotting
import TextFormatting
import ToneDecoding
import TonePlans

/// `micloop plot`: a picture of an audio file — levels, talk, tones and a
/// spectrogram on one time axis — as PNG, SVG or PDF.
struct Plot: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "plot",
    abstract: "Draw an audio file: levels, talk, tones and a spectrogram (PNG, SVG or PDF).",
    discussion: """
      The top panel shows RMS (filled) and peak in dBFS every pixel, talk segments shaded \
      and, with --plan, each decoded tone or call marked with its symbols; the bottom \
      panel is a spectrogram of the mix of the channels (or of --channel) from 0 Hz to \
      half the sample rate. The file is read once, streamed; any length plots in bounded memory.
      """)

  @Option(
    name: [.short, .long], help: "Audio file to draw (WAV, FLAC, OGG …); - reads standard input.")
  var input: String
  @Option(
    name: [.short, .long], help: "The picture to write: its extension picks PNG, SVG or PDF.")
  var output: String
  @Option(help: "Also mark the tones of these plan(s): \(TonePlan.names).")
  var plan: String?
  @Flag(help: "Also draw the momentary loudness (LUFS) and give the integrated loudness.")
  var loudness = false
  @Option(parsing: .unconditional, help: "Width in pixels (points for SVG and PDF).")
  var width = 1600
  @Option(parsing: .unconditional, help: "Height in pixels (points for SVG and PDF).")
  var height = 900
  @Option(
    parsing: .unconditional,
    help: "Draw only this channel (1 = first); default: levels of the loudest, spectrum of the mix."
  )
  var channel: Int?
  @Flag(help: "Print what was drawn and where as one JSON line.")
  var json = false
  @OptionGroup(title: "Talk detection") var talk: TalkOptions
  @OptionGroup(title: "Tone decisions") var decisions: ToneDecisionOptions

  func validate() throws {
    guard PlotFormat(path: output) != nil else {
      throw ValidationError(
        "--output must end in .png, .svg or .pdf (it picks the format): \(output)")
    }
    let smallest = PlotLayout.smallest
    guard (smallest.width...16_000).contains(width), (smallest.height...16_000).contains(height)
    else {
      throw ValidationError(
        "--width must be \(smallest.width) to 16000 and --height \(smallest.height) to 16000 pixels"
      )
    }
    if let plan { _ = try TonePlanList.parse(plan) }
    if let channel, !(1...64).contains(channel) {
      throw ValidationError("--channel counts from 1 to 64; use --channel 1 for the first channel")
    }
  }

  func run() throws {
    let format = PlotFormat(path: output)!
    let reader: AudioFileReader
    do { reader = try AudioFileReader(path: input) } catch { throw CommandFailure(error) }
    if loudness {
      try LoudnessRate.check(file: input, rate: reader.sampleRate, option: "--loudness")
    }
    let layout = PlotLayout(width: width, height: height)
    var settings = PlotAnalysis.Settings()
    settings.columns = 2 * layout.levels.width
    settings.spectrumRows = layout.spectrogram.height
    settings.meter.talk = talk.settings
    settings.meter.measuresLoudness = loudness
    settings.meter.channel = try ChannelChoice.index(
      channel, in: input, channelCount: reader.channelCount)
    if let plan {
      do {
        settings.tones = try ToneDecoder(
          plans: try TonePlanList.parse(plan), sampleRate: reader.sampleRate,
          settings: decisions.settings)
      } catch let error as TonePlanError {
        throw CommandFailure(message: "\(input): " + error.commandLineMessage(isFile: true))
      }
    }
    let data: PlotData
    do {
      data = try PlotAnalysis.run(
        reader, title: input == "-" ? "standard input" : Self.fileName(input), settings: settings,
        shouldStop: { interruptRequested.load(ordering: .relaxed) })
    } catch {
      throw CommandFailure(error)
    }
    do {
      try PlotRenderer(layout: layout).write(data, to: output, as: format)
    } catch {
      throw CommandFailure(message: error.description)
    }
    StandardOutput.write(
      json
        ? Self.json(data, layout: layout, output: output)
        : Self.text(data, output: output, layout: layout))
    StandardOutput.flush()
    // As meter and tones: what could be read is drawn, then the problem.
    try CommandFailure.checkDamage(
      of: input, problem: data.problem, invalidSamples: data.invalidSamples,
      treatment: "NaN, infinite or impossibly loud (beyond +60 dBFS) samples were drawn as silence")
  }

  static func fileName(_ path: String) -> String {
    String(path.split(separator: "/").last ?? Substring(path))
  }

  static func text(_ data: PlotData, output: String, layout: PlotLayout) -> String {
    "Wrote \(output) (\(layout.width)×\(layout.height)): \(DecimalFormatting.fixed(data.duration, places: 2)) s, talk in \(data.talkSegments.count) segment\(data.talkSegments.count == 1 ? "" : "s"), \(data.tones.count) tone mark\(data.tones.count == 1 ? "" : "s")"
  }

  /// The plot's geometry, so a script can find a time or a frequency on it.
  static func json(_ data: PlotData, layout: PlotLayout, output: String) -> String {
    func rect(_ r: PixelRect) -> String {
      var object = JSONObject(capacity: 64)
      object.add("x", r.x)
      object.add("y", r.y)
      object.add("width", r.width)
      object.add("height", r.height)
      return object.finished
    }
    var object = JSONObject(event: "plot", capacity: 512)
    object.add("output", output)
    object.add("width", layout.width)
    object.add("height", layout.height)
    object.add("duration", seconds: data.duration)
    object.add("levels", json: rect(layout.levels))
    object.add(
      "level_range_dbfs",
      json: JSONText.array(
        [PlotLayout.levelRange.low, PlotLayout.levelRange.high].map { String(Int($0)) }))
    object.add("spectrogram", json: rect(layout.spectrogram))
    object.add("max_frequency", data.maximumFrequency, places: 1)
    object.add(
      "talk",
      json: JSONText.array(
        data.talkSegments.map {
          JSONText.array([
            DecimalFormatting.json($0.start, places: 3), DecimalFormatting.json($0.end, places: 3),
          ])
        }))
    object.add(
      "tones",
      json: JSONText.array(
        data.tones.map {
          var tone = JSONObject(capacity: 64)
          tone.add("time", seconds: $0.time)
          tone.add("label", $0.label)
          return tone.finished
        }))
    return object.finished
  }

}
