import SignalDSP

/// The second half of the meter: the envelope and power of each channel's
/// speech band from `MeterLevelStage`, talk decisions on the loudest,
/// loudness when asked (`LoudnessMeter`, fed the full-rate frames),
/// and every event in stream order (levels, talk starts and ends, the
/// summary).
///
/// Buffers are allocated in `init`; `listen` and `report` do not allocate
/// (a live session calls them on the audio thread); `finish` allocates.
/// One caller at a time.
package final class MeterTalkStage {
  /// Rate of the reduced signal and of the envelope.
  package let envelopeRate: Double
  /// Most reduced samples one `listen` call takes.
  package let maximumCount: Int
  private var followers: [EnvelopeFollower]
  private var detector: TalkDetector
  private let powerBuffers: [UnsafeMutableBufferPointer<Float>]
  private var lastEnvelope: Float = 0
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
    followers = Array(
      repeating: EnvelopeFollower(
        attackTime: settings.attackTime, releaseTime: settings.releaseTime,
        sampleRate: envelopeRate), count: channelCount)
    detector = TalkDetector(settings: settings, envelopeRate: envelopeRate)
    defer {
      // An unoptimised build sets up the metadata of generic types (the
      // optional loudness of a reading) on first use: let that be here,
      // not on the audio thread.
      report(IntervalLevels(time: 0, peakDecibels: nil, rmsDecibels: nil)) { _ in }
    }
    powerBuffers = (0..<channelCount).map { _ in
      let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: maximumCount)
      buffer.initialize(repeating: 0)
      return buffer
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

  deinit { for buffer in powerBuffers { buffer.deallocate() } }

  /// Whether talk is in progress.
  package var isTalking: Bool { detector.isTalking }

  /// Listens to `count` speech-band samples of each channel at
  /// `reduced[i] + offset` (overwritten with their envelopes), calling
  /// `emit` for every talk start and end.
  package func listen(
    _ reduced: [UnsafeMutablePointer<Float>], offset: Int, count: Int,
    emit: (MeterEvent) -> Void
  ) {
    precondition(count <= maximumCount)
    guard count > 0 else { return }
    // Channels go in pairs: two independent followers in one loop run
    // side by side instead of one waiting for the other's chain.
    var index = 0
    while index + 1 < followers.count {
      let first = reduced[index] + offset
      let second = reduced[index + 1] + offset
      let firstPower = powerBuffers[index]
      let secondPower = powerBuffers[index + 1]
      var firstFollower = followers[index]
      var secondFollower = followers[index + 1]
      for i in 0..<count {
        let a = first[i]
        let b = second[i]
        firstPower[i] = a * a
        secondPower[i] = b * b
        first[i] = firstFollower.process(a)
        second[i] = secondFollower.process(b)
      }
      followers[index] = firstFollower
      followers[index + 1] = secondFollower
      index += 2
    }
    if index < followers.count {
      let band = reduced[index] + offset
      let power = powerBuffers[index]
      var follower = followers[index]
      for i in 0..<count {
        power[i] = band[i] * band[i]
        band[i] = follower.process(band[i])
      }
      followers[index] = follower
    }
    let combined = reduced[0] + offset
    let combinedPower = powerBuffers[0]
    for other in 1..<followers.count {
      let envelope = reduced[other] + offset
      let power = powerBuffers[other]
      for i in 0..<count {
        combined[i] = max(combined[i], envelope[i])
        combinedPower[i] = max(combinedPower[i], power[i])
      }
    }
    lastEnvelope = combined[count - 1]
    // `handle` must not touch `detector`, which is being mutated here.
    detector.process(
      UnsafeBufferPointer(start: combined, count: count),
      power: UnsafeBufferPointer(rebasing: combinedPower[0..<count])
    ) { transition in
      handle(transition, emit: emit)
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
          envelopeDecibels: Decibels.fromAmplitude(Double(lastEnvelope)),
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
}
