import SignalDSP

/// The levels of one finished metering interval, handed from the level
/// stage to the talk stage.
package struct IntervalLevels: Sendable, Equatable {
  /// Stream time at the end of the interval, in seconds.
  package var time: Double
  /// Peak of the loudest metered channel, in dBFS.
  package var peakDecibels: Double?
  /// RMS of the loudest metered channel (in the chosen convention), in dBFS.
  package var rmsDecibels: Double?
  /// The meter reading under the chosen ballistics at the end of the
  /// interval, loudest channel, in dBFS (`nil` for silence and for loudness
  /// ballistics, which the talk stage reads).
  package var meterDecibels: Double?
  /// The same for each metered channel.
  package var channels: ChannelReadings

  package init(
    time: Double, peakDecibels: Double?, rmsDecibels: Double?, meterDecibels: Double? = nil,
    channels: ChannelReadings = ChannelReadings()
  ) {
    self.channels = channels
    self.time = time
    self.peakDecibels = peakDecibels
    self.rmsDecibels = rmsDecibels
    self.meterDecibels = meterDecibels
  }
}

/// The first half of the meter: screens samples for damaged data
/// (`SampleScreen`: NaN, infinity, beyond +60 dBFS),
/// accumulates peak and RMS per interval and in total (and the true peak
/// of every channel when loudness is measured), and reduces each
/// metered channel to the talk detector's rate by block averaging
/// (`MeterTalkStage`, the second half, filters that to the speech band).
///
/// `MeterProcessor` runs both halves on one thread; a file meter may run
/// this one on a reader thread and the talk stage on another. Buffers are
/// allocated in `init`; `measure` does not allocate. One caller at a time.
package final class MeterLevelStage {
  package let sampleRate: Double
  package let channelCount: Int
  /// The channels metered, 0-based.
  package let meteredChannels: [Int]
  /// Frames per level reading.
  package let intervalFrames: Int
  /// Rate of the speech-band signal handed to the talk stage.
  package let reducedRate: Double
  /// Largest slice `measure` accepts, in frames.
  package let maximumBlock: Int
  /// Whether samples are screened for damaged data (`SampleScreen`).
  package let screensNonFinite: Bool
  private let rmsOffset: Double
  private var framesInInterval = 0
  private var framesProcessed: Int64 = 0
  private var intervalLevels: [LevelAccumulator]
  private var totalLevels: [LevelAccumulator]
  private var reducers: [BoxcarDecimator]
  private let channelBuffer: UnsafeMutableBufferPointer<Float>
  /// Peaks of the chunks a slice completes, for a peak meter's ballistics
  /// (chunks run on across slices and end with each interval: see `LevelAccumulator`).
  private let chunkPeaks: UnsafeMutableBufferPointer<Float>
  private var invalidSamples = 0
  private let truePeaks: [TruePeakMeter]
  private var meters: [BallisticMeter]
  /// dB added to the meter reading (the RMS convention, for the VU meter).
  private let meterOffset: Double

  package init(
    sampleRate: Double, channelCount: Int, settings: MeterSettings, maximumBlock: Int,
    screensNonFinite: Bool
  ) {
    precondition(sampleRate > 0 && channelCount > 0 && maximumBlock > 0)
    self.sampleRate = sampleRate
    self.channelCount = channelCount
    self.maximumBlock = maximumBlock
    self.screensNonFinite = screensNonFinite
    rmsOffset = settings.rmsConvention.offset
    if let channel = settings.channel {
      precondition(channel >= 0 && channel < channelCount)
      meteredChannels = [channel]
    } else {
      meteredChannels = Array(0..<channelCount)
    }
    intervalFrames = max(1, Int((settings.interval * sampleRate).rounded()))
    intervalLevels = Array(repeating: LevelAccumulator(), count: meteredChannels.count)
    totalLevels = intervalLevels
    let factor = SpeechBandFilter.reductionFactor(forSampleRate: sampleRate)
    reducers = Array(repeating: BoxcarDecimator(factor: factor), count: meteredChannels.count)
    reducedRate = sampleRate / Double(factor)
    meters = Array(
      repeating: BallisticMeter(ballistics: settings.ballistics, sampleRate: sampleRate),
      count: meteredChannels.count)
    meterOffset = settings.ballistics == .vu ? rmsOffset : 0
    truePeaks =
      settings.measuresLoudness
      ? (0..<channelCount).map { _ in
        TruePeakMeter(sampleRate: sampleRate, maximumBlock: maximumBlock)
      } : []
    channelBuffer = .allocate(capacity: channelCount > 1 ? maximumBlock : 0)
    channelBuffer.initialize(repeating: 0)
    chunkPeaks = .allocate(capacity: LevelAccumulator.chunkCount(forSamples: maximumBlock))
    chunkPeaks.initialize(repeating: 0)
  }

  deinit {
    channelBuffer.deallocate()
    chunkPeaks.deallocate()
  }

  /// Stream time in seconds of the frames measured so far.
  package var time: Double { Double(framesProcessed) / sampleRate }
  /// Frames left before the current interval ends: the most one
  /// `measure` call may take.
  package var framesLeftInInterval: Int { intervalFrames - framesInInterval }

  /// The most reduced samples per channel that `frameCount` frames can
  /// yield, over any number of calls.
  package func maximumReducedCount(forFrames frameCount: Int) -> Int {
    reducers[0].maximumOutputCount(forInput: frameCount)
  }

  /// Measures `frameCount` interleaved frames (at most `maximumBlock` and
  /// `framesLeftInInterval`), writing each metered channel at the reduced
  /// rate to `reduced[i] + offset`. Damaged samples (NaN,
  /// infinite, beyond +60 dBFS) are counted and replaced by zero in place.
  /// - Returns: the reduced samples written per channel, and the levels of
  ///   the interval when this slice ended it.
  package func measure(
    _ samples: UnsafeMutablePointer<Float>, frameCount: Int,
    into reduced: [UnsafeMutablePointer<Float>], offset: Int
  ) -> (reducedCount: Int, finished: IntervalLevels?) {
    precondition(frameCount <= min(maximumBlock, framesLeftInInterval))
    if screensNonFinite {
      invalidSamples += SampleScreen.screen(samples, count: frameCount * channelCount)
    }
    for channel in 0..<truePeaks.count {
      truePeaks[channel].process(samples + channel, count: frameCount, stride: channelCount)
    }
    let pairsMeters = meters[0].ballistics == .vu
    if pairsMeters { runVUMeters(samples, frameCount: frameCount) }
    var reducedCount = 0
    // Index loops: generic iterators may box their elements in unoptimised builds.
    for index in 0..<meteredChannels.count {
      let channel = meteredChannels[index]
      let source: UnsafeBufferPointer<Float>
      if channelCount == 1 {
        source = UnsafeBufferPointer(start: samples, count: frameCount)
      } else {
        Self.extract(
          channel, of: channelCount, from: samples, frameCount: frameCount,
          into: channelBuffer.baseAddress!)
        source = UnsafeBufferPointer(rebasing: channelBuffer[0..<frameCount])
      }
      if meters[index].readsChunkPeaks {
        let chunks = intervalLevels[index].accumulate(source, chunkPeaks: chunkPeaks.baseAddress!)
        meters[index].processPeaks(
          chunkPeaks.baseAddress!, count: chunks, chunkLength: LevelAccumulator.peakChunk)
      } else {
        intervalLevels[index].accumulate(source)
        if !pairsMeters { meters[index].process(source.baseAddress!, count: frameCount) }
      }
      reducedCount = reducers[index].process(source, into: reduced[index] + offset)
    }
    framesInInterval += frameCount
    framesProcessed += Int64(frameCount)
    guard framesInInterval == intervalFrames else { return (reducedCount, nil) }
    return (reducedCount, endInterval())
  }

  /// Feeds VU meters from the interleaved frames, two channels at a time
  /// (`BallisticMeter.process(_:_:_:_:count:stride:)`).
  private func runVUMeters(_ samples: UnsafePointer<Float>, frameCount: Int) {
    let (channels, stride) = (meteredChannels, channelCount)
    meters.withUnsafeMutableBufferPointer { buffer in
      let meters = buffer.baseAddress!
      var index = 0
      while index + 2 <= channels.count {
        BallisticMeter.process(
          &meters[index], samples + channels[index], &meters[index + 1],
          samples + channels[index + 1], count: frameCount, stride: stride)
        index += 2
      }
      if index < channels.count {
        meters[index].process(samples + channels[index], count: frameCount, stride: stride)
      }
    }
  }

  /// Ends a partial interval at the end of the stream; `nil` when none is open.
  package func finishInterval() -> IntervalLevels? {
    framesInInterval > 0 ? endInterval() : nil
  }

  /// Totals of everything measured; the talk fields are left at zero for
  /// the talk stage to fill. Allocates: call it from the control thread.
  package func summary() -> MeterSummary {
    let channels = totalLevels.map {
      ChannelLevels(
        peakDecibels: $0.peakDecibels, rmsDecibels: $0.rmsDecibels.map { $0 + rmsOffset })
    }
    return MeterSummary(
      duration: time, peakDecibels: Self.loudestPeak(totalLevels),
      rmsDecibels: Self.loudestRMS(totalLevels).map { $0 + rmsOffset }, talkSeconds: 0,
      talkSegments: 0, channels: channels, invalidSamples: invalidSamples,
      loudness: truePeaks.isEmpty ? nil : truePeakOnly())
  }

  /// A loudness summary with only the true peak, for the talk stage to complete.
  private func truePeakOnly() -> LoudnessSummary {
    var peak: Float = 0
    for meter in truePeaks { peak = max(peak, meter.peak) }
    return LoudnessSummary(
      integratedLUFS: nil, loudnessRangeLU: nil,
      truePeakDBTP: Decibels.fromAmplitude(Double(peak)), momentaryMaxLUFS: nil,
      shortTermMaxLUFS: nil)
  }

  private func endInterval() -> IntervalLevels {
    var meter: Double?
    var channels = ChannelReadings()
    for index in 0..<intervalLevels.count {
      // The interval's last chunk ends with it, so the reading takes in every sample.
      let length = intervalLevels[index].openChunkLength
      let chunkPeak = intervalLevels[index].endChunk()
      if length > 0 && meters[index].readsChunkPeaks {
        meters[index].processPeak(chunkPeak, length: length)
      }
      let reading = index < meters.count ? meters[index].decibels.map { $0 + meterOffset } : nil
      if let reading { meter = max(meter ?? reading, reading) }
      channels.append(
        peak: intervalLevels[index].peakDecibels,
        rms: intervalLevels[index].rmsDecibels.map { $0 + rmsOffset }, meter: reading)
    }
    let levels = IntervalLevels(
      time: time, peakDecibels: Self.loudestPeak(intervalLevels),
      rmsDecibels: Self.loudestRMS(intervalLevels).map { $0 + rmsOffset },
      meterDecibels: meter, channels: channels)
    for index in 0..<intervalLevels.count {
      totalLevels[index].merge(intervalLevels[index])
      intervalLevels[index].reset()
    }
    framesInInterval = 0
    return levels
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

  /// Copies one channel of interleaved frames out, eight frames per step
  /// for stereo.
  static func extract(
    _ channel: Int, of channelCount: Int, from samples: UnsafePointer<Float>, frameCount: Int,
    into target: UnsafeMutablePointer<Float>
  ) {
    var frame = 0
    if channelCount == 2 {
      let raw = UnsafeRawPointer(samples)
      let stride = MemoryLayout<Float>.stride
      while frame + 8 <= frameCount {
        let first = raw.loadUnaligned(fromByteOffset: 2 * frame * stride, as: SIMD8<Float>.self)
        let second = raw.loadUnaligned(
          fromByteOffset: (2 * frame + 8) * stride, as: SIMD8<Float>.self)
        let picked =
          channel == 0
          ? SIMD8(lowHalf: first.evenHalf, highHalf: second.evenHalf)
          : SIMD8(lowHalf: first.oddHalf, highHalf: second.oddHalf)
        UnsafeMutableRawPointer(target + frame).storeBytes(of: picked, as: SIMD8<Float>.self)
        frame += 8
      }
    }
    var source = samples + frame * channelCount + channel
    while frame < frameCount {
      target[frame] = source.pointee
      source += channelCount
      frame += 1
    }
  }
}
