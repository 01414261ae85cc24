/// Settings of a meter. Every field has a working default.
public struct MeterSettings: Sendable, Equatable {
  /// Seconds per level reading.
  public var interval: Double = 0.1
  /// Talk detector settings.
  public var talk = TalkDetectorSettings()
  /// The one channel to meter (0-based), or `nil` for all (the loudest is reported).
  public var channel: Int?
  /// How RMS levels are referenced.
  public var rmsConvention: RMSConvention = .sox
  /// Whether loudness (BS.1770 / EBU R128) and true peak are measured too.
  public var measuresLoudness = false
  /// The ballistics of the meter reading (`.lufs` needs `measuresLoudness`).
  public var ballistics = MeterBallistics.digital

  public init() {}
}

/// Meters interleaved Float32 audio: peak and RMS per interval and in total,
/// and talk/silence from the speech-band envelope of every channel — the
/// level stage and the talk stage run one after the other on the calling
/// thread. The readings depend on the samples alone, not on how they are
/// cut into `process` calls: every running sum and chunk carries over from
/// one call to the next.
///
/// Buffers are allocated in `init`; `process` does not allocate, so a live
/// session may call it on the audio thread. `finish` builds the summary and
/// allocates: call it from the control thread. One caller at a time.
public final class MeterProcessor {
  public let sampleRate: Double
  public let channelCount: Int
  public let settings: MeterSettings
  /// Largest block `process` takes at once, in frames (longer ones are split).
  public let maximumBlock: Int
  private let levels: MeterLevelStage
  private let talk: MeterTalkStage
  private let reduced: [UnsafeMutablePointer<Float>]

  /// Whether samples are screened for damaged data (NaN, infinity, beyond +60 dBFS: `SampleScreen`) (integer sources
  /// cannot hold them, so file metering turns this off for them).
  public var screensNonFinite: Bool { levels.screensNonFinite }

  public init(
    sampleRate: Double, channelCount: Int, settings: MeterSettings, maximumBlock: Int = 4096,
    screensNonFinite: Bool = true
  ) {
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.settings = settings
    self.maximumBlock = maximumBlock
    levels = MeterLevelStage(
      sampleRate: sampleRate, channelCount: channelCount, settings: settings,
      maximumBlock: maximumBlock, screensNonFinite: screensNonFinite)
    let capacity = levels.maximumReducedCount(forFrames: maximumBlock)
    talk = MeterTalkStage(following: levels, settings: settings, blockFrames: maximumBlock)
    reduced = levels.meteredChannels.map { _ in
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
      buffer.initialize(repeating: 0, count: capacity)
      return buffer
    }
  }

  deinit { for buffer in reduced { buffer.deallocate() } }

  /// Stream time in seconds of the frames processed so far.
  public var time: Double { levels.time }
  /// Whether talk is in progress.
  public var isTalking: Bool { talk.isTalking }

  /// Meters `frameCount` interleaved frames from `samples`, calling `emit`
  /// for every reading and talk change. Damaged samples (NaN, infinite, beyond +60 dBFS) are
  /// counted and replaced by zero in place.
  public func process(
    _ samples: UnsafeMutablePointer<Float>, frameCount: Int, emit: (MeterEvent) -> Void
  ) {
    var offset = 0
    while offset < frameCount {
      let count = min(frameCount - offset, levels.framesLeftInInterval, maximumBlock)
      let slice = samples + offset * channelCount
      let measured = levels.measure(slice, frameCount: count, into: reduced, offset: 0)
      talk.measureLoudness(slice, frameCount: count)
      talk.listen(reduced, offset: 0, count: measured.reducedCount, emit: emit)
      if let interval = measured.finished { talk.report(interval, emit: emit) }
      offset += count
    }
  }

  /// Ends the stream: reports the last partial interval, closes talk in
  /// progress and emits the summary.
  public func finish(emit: (MeterEvent) -> Void) {
    if let interval = levels.finishInterval() { talk.report(interval, emit: emit) }
    talk.finish(levels.summary(), emit: emit)
  }
}
