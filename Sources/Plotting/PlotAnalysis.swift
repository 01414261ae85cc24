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
    var talkStart: Double?
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
      case .talkStart(let time): talkStart = time
      case .talkEnd(let time):
        data.talkSegments.append((talkStart ?? time, time))
        talkStart = nil
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
        if tone.kind == .dualTone || tone.kind == .arbitrary {
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
    let blockFrames = 4096
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * channels)
    defer { buffer.deallocate() }
    let mono = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    defer { mono.deallocate() }
    var stopped = false
    while true {
      if shouldStop() {
        stopped = true
        break
      }
      let frames = try reader.read(into: buffer, frameCount: blockFrames)
      if frames == 0 { break }
      // The mix first: the meter replaces NaN in place.
      _ = MonoMix.mix(
        buffer, frameCount: frames, channelCount: channels, channel: settings.meter.channel,
        into: mono)
      meter.process(buffer, frameCount: frames, emit: handle)
      let block = UnsafeBufferPointer(start: mono, count: frames)
      spectrogram.process(block) { column, time in data.spectrum.add(column, at: time) }
      settings.tones?.process(block, emit: mark)
    }
    if reader.framesRead == 0 { throw .empty(path: reader.displayPath) }
    settings.tones?.finish(emit: mark)
    meter.finish(emit: handle)
    if let start = talkStart { data.talkSegments.append((start, data.duration)) }
    if !stopped {
      do { try reader.checkComplete() } catch { data.problem = error }
    }
    return data
  }
}
