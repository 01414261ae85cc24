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

  public init() {}
}

/// Meters interleaved Float32 audio: peak and RMS per interval and in total,
/// and talk/silence from the speech-band envelope of every channel.
///
/// Buffers are allocated in `init`; `process` does not allocate, so a live
/// session may call it on the audio thread. `finish` builds the summary and
/// allocates: call it from the control thread. One caller at a time.
public final class MeterProcessor {
  public let sampleRate: Double
  public let channelCount: Int
  public let settings: MeterSettings
  /// Largest block `process` accepts, in frames.
  public let maximumBlock: Int
  private let meteredChannels: [Int]
  private let intervalFrames: Int
  private var framesInInterval = 0
  private var framesProcessed: Int64 = 0
  private var intervalLevels: [LevelAccumulator]
  private var totalLevels: [LevelAccumulator]
  private let frontEnds: [SpeechBandEnvelope]
  private var detector: TalkDetector
  private let envelopeRate: Double
  private let channelBuffer: UnsafeMutableBufferPointer<Float>
  private let envelopeBuffers: [UnsafeMutableBufferPointer<Float>]
  private let powerBuffers: [UnsafeMutableBufferPointer<Float>]
  private var lastEnvelope: Float = 0
  private var talkStartTime: Double?
  private var talkSeconds = 0.0
  private var talkSegments = 0
  private var invalidSamples = 0

  /// Whether samples are screened for NaN and infinity (integer sources
  /// cannot hold them, so file metering turns this off for them).
  public let screensNonFinite: Bool

  public init(
    sampleRate: Double, channelCount: Int, settings: MeterSettings, maximumBlock: Int = 4096,
    screensNonFinite: Bool = true
  ) {
    self.screensNonFinite = screensNonFinite
    precondition(sampleRate > 0 && channelCount > 0 && maximumBlock > 0)
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.settings = settings
    self.maximumBlock = maximumBlock
    if let channel = settings.channel {
      precondition(channel >= 0 && channel < channelCount)
      meteredChannels = [channel]
    } else {
      meteredChannels = Array(0..<channelCount)
    }
    intervalFrames = max(1, Int((settings.interval * sampleRate).rounded()))
    intervalLevels = Array(repeating: LevelAccumulator(), count: meteredChannels.count)
    totalLevels = intervalLevels
    frontEnds = meteredChannels.map { _ in
      SpeechBandEnvelope(
        sampleRate: sampleRate, attackTime: settings.talk.attackTime,
        releaseTime: settings.talk.releaseTime, maximumBlock: maximumBlock)
    }
    envelopeRate = frontEnds[0].envelopeRate
    detector = TalkDetector(settings: settings.talk, envelopeRate: envelopeRate)
    channelBuffer = .allocate(capacity: maximumBlock)
    channelBuffer.initialize(repeating: 0)
    let envelopeCapacity = frontEnds[0].maximumOutputCount(forInput: maximumBlock)
    envelopeBuffers = meteredChannels.map { _ in
      let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: envelopeCapacity)
      buffer.initialize(repeating: 0)
      return buffer
    }
    powerBuffers = meteredChannels.map { _ in
      let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: envelopeCapacity)
      buffer.initialize(repeating: 0)
      return buffer
    }
  }

  deinit {
    channelBuffer.deallocate()
    for buffer in envelopeBuffers { buffer.deallocate() }
    for buffer in powerBuffers { buffer.deallocate() }
  }

  /// Stream time in seconds of the frames processed so far.
  public var time: Double { Double(framesProcessed) / sampleRate }
  /// Whether talk is in progress.
  public var isTalking: Bool { detector.isTalking }

  /// Meters `frameCount` interleaved frames from `samples`, calling `emit`
  /// for every reading and talk change. NaN and infinite samples are
  /// counted and replaced by zero in place.
  public func process(
    _ samples: UnsafeMutablePointer<Float>, frameCount: Int, emit: (MeterEvent) -> Void
  ) {
    var offset = 0
    while offset < frameCount {
      let count = min(frameCount - offset, intervalFrames - framesInInterval, maximumBlock)
      processSlice(samples + offset * channelCount, frameCount: count, emit: emit)
      offset += count
      framesInInterval += count
      framesProcessed += Int64(count)
      if framesInInterval == intervalFrames { endInterval(emit: emit) }
    }
  }

  /// Ends the stream: reports the last partial interval, closes talk in
  /// progress and emits the summary.
  public func finish(emit: (MeterEvent) -> Void) {
    if framesInInterval > 0 { endInterval(emit: emit) }
    if let transition = detector.finish() { handle(transition, emit: emit) }
    let channels = totalLevels.map {
      ChannelLevels(
        peakDecibels: $0.peakDecibels,
        rmsDecibels: $0.rmsDecibels.map { $0 + settings.rmsConvention.offset })
    }
    emit(
      .summary(
        MeterSummary(
          duration: time, peakDecibels: Self.loudestPeak(totalLevels),
          rmsDecibels: Self.loudestRMS(totalLevels).map { $0 + settings.rmsConvention.offset },
          talkSeconds: talkSeconds, talkSegments: talkSegments, channels: channels,
          invalidSamples: invalidSamples)))
  }

  private func processSlice(
    _ samples: UnsafeMutablePointer<Float>, frameCount: Int, emit: (MeterEvent) -> Void
  ) {
    if screensNonFinite {
      invalidSamples += Self.replaceNonFinite(samples, count: frameCount * channelCount)
    }
    var envelopeCount = 0
    // Index loops: generic iterators may box their elements in unoptimised builds.
    for index in 0..<meteredChannels.count {
      let channel = meteredChannels[index]
      let source: UnsafeBufferPointer<Float>
      if channelCount == 1 {
        source = UnsafeBufferPointer(start: samples, count: frameCount)
      } else {
        for frame in 0..<frameCount {
          channelBuffer[frame] = samples[frame * channelCount + channel]
        }
        source = UnsafeBufferPointer(rebasing: channelBuffer[0..<frameCount])
      }
      intervalLevels[index].accumulate(source)
      envelopeCount = frontEnds[index].process(
        source, into: envelopeBuffers[index].baseAddress!,
        power: powerBuffers[index].baseAddress!)
    }
    let combined = envelopeBuffers[0]
    let combinedPower = powerBuffers[0]
    for other in 1..<envelopeBuffers.count {
      let buffer = envelopeBuffers[other]
      let power = powerBuffers[other]
      for i in 0..<envelopeCount {
        combined[i] = max(combined[i], buffer[i])
        combinedPower[i] = max(combinedPower[i], power[i])
      }
    }
    if envelopeCount > 0 { lastEnvelope = combined[envelopeCount - 1] }
    // `handle` must not touch `detector`, which is being mutated here.
    detector.process(
      UnsafeBufferPointer(rebasing: combined[0..<envelopeCount]),
      power: UnsafeBufferPointer(rebasing: combinedPower[0..<envelopeCount])
    ) { transition in
      handle(transition, emit: emit)
    }
  }

  private func handle(_ transition: TalkTransition, emit: (MeterEvent) -> Void) {
    let time = Double(transition.position) / envelopeRate
    if transition.isStart {
      talkStartTime = time
      talkSegments += 1
      emit(.talkStart(time: time))
    } else {
      talkSeconds += time - (talkStartTime ?? time)
      talkStartTime = nil
      emit(.talkEnd(time: time))
    }
  }

  private func endInterval(emit: (MeterEvent) -> Void) {
    emit(
      .level(
        LevelReading(
          time: time, peakDecibels: Self.loudestPeak(intervalLevels),
          rmsDecibels: Self.loudestRMS(intervalLevels).map { $0 + settings.rmsConvention.offset },
          envelopeDecibels: Decibels.fromAmplitude(Double(lastEnvelope)),
          isTalking: detector.isTalking, talkEvidence: detector.evidence)))
    for index in 0..<intervalLevels.count {
      totalLevels[index].merge(intervalLevels[index])
      intervalLevels[index].reset()
    }
    framesInInterval = 0
  }

  private static func loudestPeak(_ levels: [LevelAccumulator]) -> Double? {
    var peak: Float = 0
    for index in 0..<levels.count { peak = max(peak, levels[index].peak) }
    return Decibels.fromAmplitude(Double(peak))
  }

  private static func loudestRMS(_ levels: [LevelAccumulator]) -> Double? {
    var meanSquare = 0.0
    for index in 0..<levels.count { meanSquare = max(meanSquare, levels[index].meanSquare) }
    return Decibels.fromPower(meanSquare)
  }

  /// Replaces NaN and ±infinity by zero; returns how many there were.
  static func replaceNonFinite(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
    // x − x is 0 for finite x and NaN otherwise, so one sum screens a block.
    var lanes = SIMD8<Float>(repeating: 0)
    var index = 0
    while index + 8 <= count {
      let v = UnsafeRawPointer(samples + index).loadUnaligned(as: SIMD8<Float>.self)
      lanes += v - v
      index += 8
    }
    var screen = lanes.sum()
    while index < count {
      screen += samples[index] - samples[index]
      index += 1
    }
    guard screen != 0 else { return 0 }
    var replaced = 0
    for i in 0..<count where !samples[i].isFinite {
      samples[i] = 0
      replaced += 1
    }
    return replaced
  }
}
