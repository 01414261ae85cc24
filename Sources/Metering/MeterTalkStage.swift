import SignalDSP

/// The second half of the meter: each channel from `MeterLevelStage`
/// filtered to its speech band (`SpeechBandFilter`), framed to 10 ms, talk decisions on the loudest
/// channel of each frame (`TalkDetector`), loudness when asked
/// (`LoudnessMeter`, fed the full-rate frames), and every event in stream
/// order (levels, talk starts and ends, the summary).
///
/// Buffers are allocated in `init`; `listen` and `report` do not allocate
/// (a live session calls them on the audio thread); `finish` allocates.
/// One caller at a time.
package final class MeterTalkStage {
  /// Rate of the reduced signal.
  package let envelopeRate: Double
  /// Most reduced samples one `listen` call takes.
  package let maximumCount: Int
  private let channelCount: Int
  private var detector: TalkDetector
  /// Each channel's speech-band filter.
  private var bands: [SpeechBandFilter]
  /// Each channel's sum of squares over the frame in progress.
  private let frameSums: UnsafeMutableBufferPointer<FrameSquareSum>
  private var talkStartTime: Double?
  private var talkSeconds = 0.0
  private var talkSegments = 0
  private let loudness: LoudnessMeter?
  /// Whether the meter reading is the momentary loudness (`.lufs` ballistics).
  private let readsLoudness: Bool

  /// - Parameters:
  ///   - loudness: the meter for `measureLoudness`, when loudness is measured.
  ///   - readsLoudness: whether readings show the momentary loudness as
  ///     the meter reading (`.lufs` ballistics) instead of the level stage's.
  package init(
    envelopeRate: Double, channelCount: Int, settings: TalkDetectorSettings, maximumCount: Int,
    loudness: LoudnessMeter? = nil, readsLoudness: Bool = false
  ) {
    precondition(envelopeRate > 0 && channelCount > 0 && maximumCount > 0)
    self.loudness = loudness
    self.readsLoudness = readsLoudness
    self.envelopeRate = envelopeRate
    self.maximumCount = maximumCount
    self.channelCount = channelCount
    detector = TalkDetector(settings: settings, envelopeRate: envelopeRate)
    bands = Array(repeating: SpeechBandFilter(rate: envelopeRate), count: channelCount)
    frameSums = .allocate(capacity: channelCount)
    frameSums.initialize(repeating: FrameSquareSum(frameLength: detector.frameLength))
    defer {
      // An unoptimised build sets up the metadata of generic types (the
      // optional loudness of a reading) on first use: let that be here,
      // not on the audio thread.
      report(IntervalLevels(time: 0, peakDecibels: nil, rmsDecibels: nil)) { _ in }
    }
  }

  /// The talk stage for `levels`: its reduced rate and metered channels,
  /// `settings`' talk detector, and a loudness meter over all of its
  /// channels when `settings` measures loudness; `listen` takes at most
  /// the reduced samples of `blockFrames` frames.
  package convenience init(
    following levels: MeterLevelStage, settings: MeterSettings, blockFrames: Int
  ) {
    self.init(
      envelopeRate: levels.reducedRate, channelCount: levels.meteredChannels.count,
      settings: settings.talk, maximumCount: levels.maximumReducedCount(forFrames: blockFrames),
      loudness: settings.measuresLoudness
        ? LoudnessMeter(sampleRate: levels.sampleRate, channelCount: levels.channelCount) : nil,
      readsLoudness: settings.ballistics == .lufs)
  }

  deinit { frameSums.deallocate() }

  /// Whether talk is in progress.
  package var isTalking: Bool { detector.isTalking }

  /// Listens to `count` reduced samples of each channel at
  /// `reduced[i] + offset` (filtered to the speech band in place), calling
  /// `emit` for every talk start and end.
  package func listen(
    _ reduced: [UnsafeMutablePointer<Float>], offset: Int, count: Int,
    emit: (MeterEvent) -> Void
  ) {
    precondition(count <= maximumCount)
    // Two channels at a time: their filters run side by side.
    bands.withUnsafeMutableBufferPointer { buffer in
      let bands = buffer.baseAddress!
      var channel = 0
      while channel + 2 <= channelCount {
        SpeechBandFilter.process(
          &bands[channel], reduced[channel] + offset, &bands[channel + 1],
          reduced[channel + 1] + offset, count: count)
        channel += 2
      }
      if channel < channelCount { bands[channel].process(reduced[channel] + offset, count: count) }
    }
    let frameLength = detector.frameLength
    var start = 0
    while start < count {
      let chunk = min(count - start, frameLength - frameSums[0].filled)
      for channel in 0..<channelCount {
        frameSums[channel].add(reduced[channel] + offset + start, count: chunk)
      }
      start += chunk
      guard frameSums[0].filled == frameLength else { continue }
      var loudest: Float = 0
      for channel in 0..<channelCount { loudest = max(loudest, frameSums[channel].take()) }
      if let transition = detector.process(framePower: Double(loudest) / Double(frameLength)) {
        handle(transition, emit: emit)
      }
    }
  }

  /// Feeds the full-rate interleaved frames of the stream, in order, to
  /// the loudness meter (nothing when loudness is not measured).
  package func measureLoudness(_ samples: UnsafePointer<Float>, frameCount: Int) {
    loudness?.process(samples, frameCount: frameCount)
  }

  /// Emits the level reading of an interval that ends after the samples
  /// listened to so far.
  package func report(_ levels: IntervalLevels, emit: (MeterEvent) -> Void) {
    emit(
      .level(
        LevelReading(
          time: levels.time, peakDecibels: levels.peakDecibels, rmsDecibels: levels.rmsDecibels,
          envelopeDecibels: detector.evidence.speechDecibels,
          isTalking: detector.isTalking, talkEvidence: detector.evidence,
          loudness: loudness.map {
            MomentaryLoudness(momentaryLUFS: $0.momentaryLUFS, shortTermLUFS: $0.shortTermLUFS)
          },
          meterDecibels: readsLoudness ? loudness?.momentaryLUFS : levels.meterDecibels,
          channels: levels.channels)))
  }

  /// Ends the stream: closes talk in progress and emits `levels` (the
  /// level stage's summary, with the true peak) completed with the talk
  /// totals and the loudness.
  package func finish(_ levels: MeterSummary, emit: (MeterEvent) -> Void) {
    if let transition = detector.finish() { handle(transition, emit: emit) }
    var summary = levels
    summary.talkSeconds = talkSeconds
    summary.talkSegments = talkSegments
    if let loudness {
      summary.loudness = loudness.summary(truePeakDBTP: levels.loudness?.truePeakDBTP)
    }
    emit(.summary(summary))
  }

  private func handle(_ transition: TriggerTransition, emit: (MeterEvent) -> Void) {
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
}
