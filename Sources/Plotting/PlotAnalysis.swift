import AudioFiles
import Metering
import SignalDSP
import ToneDecoding
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// Reads an audio file once, block by block, and gathers what a plot
/// shows: the meter's levels and talk segments (and loudness), the tones
/// of the chosen plans, and a spectrogram of the mix of the channels (or
/// of one channel). Memory stays bounded for any length. Calling thread.
public enum PlotAnalysis {
  /// What to gather.
  public struct Settings {
    /// Columns kept per panel (twice the plot's width in pixels is plenty).
    public var columns = 3200
    /// Rows of the spectrogram (the panel's height in pixels).
    public var spectrumRows = 400
    /// The meter's settings (talk detection, loudness, channel).
    public var meter = MeterSettings()
    /// The tone decoder, when tones are marked.
    public var tones: ToneDecoder?

    public init() {}
  }

  /// Gathers the plot data of `reader`; `shouldStop`, asked before each
  /// block, ends it early with what was read. A file that turns out cut
  /// short or damaged gives the data of what could be read, with the
  /// problem in `PlotData.problem`.
  public static func run(
    _ reader: AudioFileReader, title: String, settings: Settings,
    shouldStop: () -> Bool = { false }
  ) throws(AudioFileError) -> PlotData {
    let rate = reader.sampleRate
    let channels = reader.channelCount
    // A known length gives columns that never merge.
    let knownSeconds = reader.declaredFrameCount.map { Double($0) / rate } ?? 60
    let secondsPerColumn = max(knownSeconds, 0.001) / Double(settings.columns)
    var data = PlotData(
      title: title, sampleRate: rate, channelCount: channels,
      levels: TimeColumns(capacity: settings.columns, secondsPerColumn: secondsPerColumn),
      spectrum: TimeColumns(capacity: settings.columns, secondsPerColumn: secondsPerColumn),
      spectrumRows: settings.spectrumRows, maximumFrequency: rate / 2,
      hasLoudness: settings.meter.measuresLoudness)
    var meterSettings = settings.meter
    meterSettings.interval = 0.01
    let meter = MeterProcessor(
      sampleRate: rate, channelCount: channels, settings: meterSettings,
      screensNonFinite: reader.canHoldNonFiniteSamples)
    let spectrogram = SpectrogramBuilder(
      sampleRate: rate, rows: settings.spectrumRows, frameCount: reader.declaredFrameCount)
    var talk = TalkSegments()
    var lastReadingTime = 0.0
    func handle(_ event: MeterEvent) {
      switch event {
      case .level(let reading):
        let seconds = reading.time - lastReadingTime
        let peak = reading.peakDecibels.map { pow(10, $0 / 20) } ?? 0
        let meanSquare = reading.rmsDecibels.map { pow(10, $0 / 10) } ?? 0
        data.levels.add(
          LevelColumn(
            peak: peak, sumOfSquares: meanSquare * seconds * rate, frames: seconds * rate,
            loudnessLUFS: reading.loudness?.momentaryLUFS),
          at: lastReadingTime)
        lastReadingTime = reading.time
      case .talkStart, .talkEnd: talk.take(event)
      case .summary(let summary):
        data.duration = summary.duration
        data.invalidSamples = summary.invalidSamples
        data.integratedLUFS = summary.loudness?.integratedLUFS
      }
    }
    func mark(_ event: ToneDecoderEvent) {
      switch event {
      case .tone(let tone):
        // Tones of call plans come again as their call; mark the call.
        if tone.plan == "dtmf" || tone.plan.hasPrefix("freq") {
          data.tones.append(
            ToneMark(time: tone.time, duration: tone.duration, label: String(tone.symbol)))
        }
      case .toneStart:
        break
      case .sequence(let call):
        data.tones.append(ToneMark(time: call.time, duration: call.duration, label: call.text))
      case .page(let page):
        data.tones.append(
          ToneMark(
            time: page.time, duration: page.duration, label: page.isGroupCall ? "GROUP" : "PAGE"))
      }
    }
    let blocks = (0..<Self.blocksInFlight).map { _ in
      PlotBlock(frames: Self.blockFrames, channels: channels)
    }
    let mixedChannel = settings.meter.channel
    let read = try ReadAhead.run(
      reader, blocks: blocks, shouldStop: shouldStop,
      fill: { block, stopRequested, _ in
        block.fill(from: reader, meter: meter, channel: mixedChannel, stopRequested: stopRequested)
      },
      consume: { block, _ in
        for event in block.events { handle(event) }
        guard block.frames > 0 else { return }
        let mono = UnsafeBufferPointer(start: block.mono, count: block.frames)
        spectrogram.process(mono) { column, time in data.spectrum.add(column, at: time) }
        settings.tones?.process(mono, emit: mark)
      })
    settings.tones?.finish(emit: mark)
    meter.finish(emit: handle)
    data.talkSegments = talk.closing(at: data.duration)
    data.problem = read.problem
    return data
  }

  /// Frames read at a time.
  static let blockFrames = 4096
  /// Blocks read ahead at most.
  static let blocksInFlight = 4
}

/// One block on its way from the reader thread, which reads it, mixes it
/// to mono and meters it, to the calling thread, which gathers the meter's
/// events, the spectrogram and the tones.
final class PlotBlock {
  /// The frames as read (screened by the meter).
  let samples: UnsafeMutablePointer<Float>
  /// Their mix (or one channel).
  let mono: UnsafeMutablePointer<Float>
  var frames = 0
  /// What the meter reported while it measured the block.
  var events = [MeterEvent]()
  private let capacity: Int

  init(frames: Int, channels: Int) {
    capacity = frames
    samples = .allocate(capacity: frames * channels)
    samples.initialize(repeating: 0, count: frames * channels)
    mono = .allocate(capacity: frames)
    mono.initialize(repeating: 0, count: frames)
  }

  deinit {
    samples.deallocate()
    mono.deallocate()
  }

  /// Reads, mixes and meters a block (reader thread); returns the stream's
  /// ending when this is the last block.
  func fill(
    from reader: AudioFileReader, meter: MeterProcessor, channel: Int?, stopRequested: Bool
  ) -> ReadAhead.Ending? {
    events.removeAll(keepingCapacity: true)
    frames = 0
    guard !stopRequested else { return .finished }
    do throws(AudioFileError) {
      frames = try reader.read(into: samples, frameCount: capacity)
    } catch {
      return .failed(error)
    }
    if frames == 0 { return .finished }
    // The mix first: the meter replaces NaN in place.
    _ = MonoMix.mix(
      samples, frameCount: frames, channelCount: reader.channelCount, channel: channel,
      into: mono)
    meter.process(samples, frameCount: frames) { events.append($0) }
    return nil
  }
}
