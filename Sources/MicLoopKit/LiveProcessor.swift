import DuplexIO
import FeedbackControl
import Metering
import SignalDSP
import Synchronization

/// A meter or talk event in a form that crosses from the audio thread to
/// the control thread through a ring (no references, no allocation).
public struct LiveEvent: BitwiseCopyable, Sendable {
  public enum Kind: UInt8, Sendable, BitwiseCopyable { case level, talkStart, talkEnd }
  public var kind: Kind
  public var time: Double
  /// Levels in dBFS; NaN stands for silence (or, for the talk evidence, unknown).
  public var peak: Double
  public var rms: Double
  public var envelope: Double
  public var speech: Double
  public var noiseFloor: Double
  public var open: Double
  public var close: Double
  public var isTalking: Bool
  /// Whether loudness was measured; then momentary and short-term LUFS (NaN: not yet known).
  public var hasLoudness = false
  public var momentary: Double = .nan
  public var shortTerm: Double = .nan
  /// The meter reading under the chosen ballistics (NaN: silence).
  public var meter: Double = .nan
  /// Levels of each metered channel.
  public var channels = ChannelReadings()

  init(_ event: MeterEvent) {
    switch event {
    case .level(let reading):
      let evidence = reading.talkEvidence
      self.init(kind: .level, time: reading.time, isTalking: reading.isTalking)
      peak = reading.peakDecibels ?? .nan
      rms = reading.rmsDecibels ?? .nan
      envelope = reading.envelopeDecibels ?? .nan
      speech = evidence.speechDecibels ?? .nan
      noiseFloor = evidence.noiseFloorDecibels ?? .nan
      open = evidence.openDecibels ?? .nan
      close = evidence.closeDecibels ?? .nan
      meter = reading.meterDecibels ?? .nan
      channels = reading.channels
      if let loudness = reading.loudness {
        hasLoudness = true
        momentary = loudness.momentaryLUFS ?? .nan
        shortTerm = loudness.shortTermLUFS ?? .nan
      }
    case .talkStart(let time):
      self.init(kind: .talkStart, time: time, isTalking: true)
    case .talkEnd(let time):
      self.init(kind: .talkEnd, time: time, isTalking: false)
    case .summary:
      self.init(kind: .level, time: 0, isTalking: false)
    }
  }

  init(kind: Kind, time: Double, isTalking: Bool) {
    self.kind = kind
    self.time = time
    self.isTalking = isTalking
    peak = .nan
    rms = .nan
    envelope = .nan
    speech = .nan
    noiseFloor = .nan
    open = .nan
    close = .nan
  }

  /// The event as the meter reports it.
  public var meterEvent: MeterEvent {
    func level(_ value: Double) -> Double? { value.isNaN ? nil : value }
    switch kind {
    case .level:
      return .level(
        LevelReading(
          time: time, peakDecibels: level(peak), rmsDecibels: level(rms),
          envelopeDecibels: level(envelope), isTalking: isTalking,
          talkEvidence: TalkEvidence(
            speechDecibels: level(speech), noiseFloorDecibels: level(noiseFloor),
            openDecibels: level(open), closeDecibels: level(close)),
          loudness: hasLoudness
            ? MomentaryLoudness(momentaryLUFS: level(momentary), shortTermLUFS: level(shortTerm))
            : nil, meterDecibels: level(meter), channels: channels))
    case .talkStart: return .talkStart(time: time)
    case .talkEnd: return .talkEnd(time: time)
    }
  }
}

/// Settings of a live job; every field has a default.
public struct LiveSettings: Sendable {
  /// Meter the input (levels and talk); `nil` for no meter.
  public var meter: MeterSettings? = MeterSettings()
  /// Gain from input to output in dB.
  public var gainDecibels = 0.0
  /// Soft-limit the output so passthrough never wraps.
  public var isLimiting = true
  /// Keep a copy of the captured input for a recording.
  public var isRecording = false
  /// Seconds of audio the recording ring holds while the control thread catches up.
  public var recordingBuffer = 4.0
  /// Hand a mono mix of the input to the control thread (tone decoding).
  public var isAnalyzing = false
  /// Analyse only this channel (zero-based) instead of the mix of all.
  public var analysisChannel: Int?
  /// Protect the output from feedback (howl) with these settings; `nil`
  /// leaves the output path as it is.
  public var feedbackGuard: HowlGuardSettings?
  /// Notches the guard sets ahead as the gain rises, from the loop's
  /// measured response, at the stream's sample rate: a `LiveJob` refuses
  /// a plan at another rate (`LiveJobError.ringOutRate`); a processor used
  /// on its own leaves such a plan out.
  public var feedbackRingOut: RingOutPlan?
  /// Without a ring-out plan, learn the loop while it runs (what it plays
  /// and hears while the guard is idle) and set notches ahead from that
  /// (`LoopLearner`, `LearnedLoop`; the control thread calls `learnLoop`).
  public var feedbackLearning = true
  /// Gain changes at given stream times, applied on the audio thread at the
  /// start of the period that holds each time (a key press or mute
  /// overrides the gain until the next change).
  public var gainChanges: [GainChange] = []

  public init() {}
}

/// A gain to switch to at a moment of the stream.
public struct GainChange: Sendable, Equatable {
  /// Seconds of stream time.
  public var time: Double
  /// The new gain in dB.
  public var decibels: Double

  public init(time: Double, decibels: Double) {
    self.time = time
    self.decibels = decibels
  }
}

/// The client of a live unit: meters the captured input, passes it to the
/// output through the howl guard (when asked for) with a ramped gain and a
/// soft limiter, and hands events, the recording and a mono copy for
/// analysis to the control thread through rings.
///
/// `prepare(for:)` allocates everything once the devices have granted their
/// formats (control thread); the callbacks run on the audio thread and never
/// allocate. The cross-thread surface is `gain`, `framesProcessed` and the
/// rings; `setGain`, `setMuted` and `finishMeter` belong to the control
/// thread.
public final class LiveProcessor: DuplexClient, @unchecked Sendable {
  public let settings: LiveSettings
  /// The granted capture format; set by `prepare`.
  public private(set) var format = StreamFormat(sampleRate: 48_000, channelCount: 1)
  /// Events for the control thread.
  public let events = SPSCRing<LiveEvent>(capacity: 4096)
  /// What the howl guard did, for the control thread.
  public let feedbackEvents = SPSCRing<HowlGuardEvent>(capacity: 1024)
  /// The howl guard in the output path (made by `prepare` when the
  /// settings ask for one; its state belongs to the audio thread).
  public private(set) var howlGuard: HowlGuard?
  /// The captured input, interleaved, with the stream frame of each
  /// period, for a recording (when enabled).
  public private(set) var recording: CaptureRing?
  /// The captured input folded to mono, for analysis on the control thread.
  public private(set) var analysis: SPSCRing<Float>?
  /// Frames captured so far.
  public let framesProcessed = Atomic<Int>(0)
  /// What the output played and the input heard, frame by frame in pairs,
  /// while the howl guard was idle: the loop's learning material.
  public private(set) var loopPairs: SPSCRing<Float>?
  /// The gain of the last period, dB, as bits of a Double (audio thread writes).
  private let periodGain = Atomic<UInt64>(0)
  /// The learner and its scratch (control thread).
  private var loopLearner: LoopLearner?
  private var learnedPlayed = [Float]()
  private var learnedHeard = [Float]()
  private var learnedSinceSolve = false
  /// The transform every learned plan is worked out in, made with the first.
  private var learnedTransform: RealFourierTransform?
  /// The fewest frames in which the speaker's sound can come back (control thread).
  private var loopDelay = 0
  /// Frames processed when the last solution was started.
  private var solveStarted = Int.min / 2
  /// The job's length in frames: input past it is still passed to the
  /// output but no longer metered, recorded or analysed, so a job of
  /// `--duration` seconds reports exactly that many, however late the
  /// control thread notices the end. Set before the unit starts.
  public let frameLimit = Atomic<Int>(.max)
  /// Gain from input to output (linear), ramped over 5 ms on the audio thread.
  public let gain: RampedParameter
  /// Whether the output is muted (control thread).
  public private(set) var isMuted = false
  /// The gain asked for in dB, muted or not (control thread).
  public private(set) var gainDecibels: Double

  private var meter: MeterProcessor?
  private var input = UnsafeMutableBufferPointer<Float>.allocate(capacity: 0)
  private var mono = UnsafeMutablePointer<Float>.allocate(capacity: 0)
  /// `settings.gainChanges` in frames and linear gain, in time order, and the next one due.
  private var changeFrames = UnsafeMutablePointer<Int64>.allocate(capacity: 0)
  private var changeGains = UnsafeMutablePointer<Float>.allocate(capacity: 0)
  private var changeCount = 0
  private var nextChange = 0
  private var pairs = UnsafeMutablePointer<Float>.allocate(capacity: 0)
  private var pairFrames = 0

  public init(settings: LiveSettings) {
    self.settings = settings
    gainDecibels = settings.gainDecibels
    gain = RampedParameter(value: Float(Decibels.amplitude(settings.gainDecibels)), rampFrames: 0)
  }

  deinit {
    input.deallocate()
    mono.deallocate()
    changeFrames.deallocate()
    changeGains.deallocate()
    pairs.deallocate()
  }

  public func prepare(for granted: IOFormat) {
    let format =
      granted.input
      ?? StreamFormat(sampleRate: granted.output?.sampleRate ?? 48_000, channelCount: 1)
    self.format = format
    let maximumPeriod = granted.maximumFrameCount
    // 5 ms ramps: no zipper noise, no audible lag.
    gain.rampFrames = max(1, format.sampleRate / 200)
    input.deallocate()
    input = .allocate(capacity: maximumPeriod * format.channelCount)
    input.initialize(repeating: 0)
    mono.deallocate()
    mono = .allocate(capacity: maximumPeriod)
    mono.initialize(repeating: 0, count: maximumPeriod)
    let changes = settings.gainChanges.sorted { $0.time < $1.time }
    changeFrames.deallocate()
    changeGains.deallocate()
    changeFrames = .allocate(capacity: max(1, changes.count))
    changeGains = .allocate(capacity: max(1, changes.count))
    for (index, change) in changes.enumerated() {
      changeFrames[index] = Int64((change.time * Double(format.sampleRate)).rounded())
      changeGains[index] = Float(Decibels.amplitude(change.decibels))
    }
    changeCount = changes.count
    nextChange = 0
    if let guardSettings = settings.feedbackGuard {
      let outputChannels = granted.output?.channelCount ?? format.channelCount
      // Prepared again for the same format (a device that came back), the guard keeps its notches.
      if howlGuard?.sampleRate != Double(format.sampleRate)
        || howlGuard?.channelCount != outputChannels
      {
        let plan = settings.feedbackRingOut
        let ringOut = plan?.sampleRate == Double(format.sampleRate) ? plan : nil
        let learns = settings.feedbackLearning && ringOut == nil
        howlGuard = HowlGuard(
          settings: guardSettings, sampleRate: Double(format.sampleRate),
          channelCount: outputChannels, maximumFrameCount: 2 * maximumPeriod,
          ringOut: ringOut, learns: learns)
        loopLearner =
          learns
          ? LoopLearner(
            length: Int(guardSettings.learnedDuration * Double(format.sampleRate)),
            delay: max(1, Int(guardSettings.learnedFirstLag * Double(format.sampleRate))),
            sampleRate: Double(format.sampleRate), band: guardSettings.learnedHighest) : nil
        loopDelay = granted.loopDelayFrames
        loopPairs = learns ? SPSCRing(capacity: 2 * 4 * format.sampleRate) : nil
      }
    }
    pairs.deallocate()
    pairFrames = loopPairs == nil ? 0 : 2 * maximumPeriod
    pairs = .allocate(capacity: 2 * pairFrames)
    pairs.initialize(repeating: 0, count: 2 * pairFrames)
    let ringFrames = Int(settings.recordingBuffer * Double(format.sampleRate))
    analysis = settings.isAnalyzing ? SPSCRing(capacity: ringFrames) : nil
    recording =
      settings.isRecording
      ? CaptureRing(frames: ringFrames, channelCount: format.channelCount) : nil
    // Prepared again for a device that came back in the same format, the
    // meter carries on: its stream time, talk state and totals continue.
    if let meter, meter.sampleRate == Double(format.sampleRate),
      meter.channelCount == format.channelCount
    {
      return
    }
    meter = settings.meter.map {
      MeterProcessor(
        sampleRate: Double(format.sampleRate), channelCount: format.channelCount, settings: $0,
        maximumBlock: maximumPeriod)
    }
  }

  /// Sets the gain in dB (control thread); heard at once unless muted.
  public func setGain(decibels: Double) {
    gainDecibels = decibels
    if !isMuted { gain.set(Float(Decibels.amplitude(decibels))) }
  }

  /// Mutes or unmutes the output with the same ramp as a gain change (control thread).
  public func setMuted(_ muted: Bool) {
    isMuted = muted
    gain.set(muted ? 0 : Float(Decibels.amplitude(gainDecibels)))
  }

  public func inputAvailable(_ captured: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    let base = input.baseAddress!
    captured.render(into: input)
    let remaining =
      frameLimit.load(ordering: .relaxed) - framesProcessed.load(ordering: .relaxed)
    let frames = min(captured.frameCount, max(0, remaining))
    guard frames > 0 else { return }
    recording?.push(
      base, frames: frames, at: Int64(framesProcessed.load(ordering: .relaxed)))
    if let analysis {
      MonoMix.mix(
        base, frameCount: frames, channelCount: format.channelCount,
        channel: settings.analysisChannel, into: mono)
      analysis.push(mono, count: frames)
    }
    if let meter {
      meter.process(base, frameCount: frames) { event in events.push(LiveEvent(event)) }
    }
    framesProcessed.add(frames, ordering: .releasing)
  }

  public func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    let frameCount = output.frameCount
    let inChannels = format.channelCount
    let outChannels = output.channelCount
    let destination = output.samples.baseAddress!
    if inChannels == outChannels {
      destination.update(from: input.baseAddress!, count: frameCount * inChannels)
    } else if inChannels == 1 {
      for frame in 0..<frameCount {
        for channel in 0..<outChannels { destination[frame * outChannels + channel] = input[frame] }
      }
    } else {
      // Fold every input channel into each output channel (average).
      let scale = 1 / Float(inChannels)
      for frame in 0..<frameCount {
        var sum: Float = 0
        for channel in 0..<inChannels { sum += input[frame * inChannels + channel] }
        for channel in 0..<outChannels { destination[frame * outChannels + channel] = sum * scale }
      }
    }
    while nextChange < changeCount && timeStamp.sampleTime >= changeFrames[nextChange] {
      gain.set(changeGains[nextChange])
      nextChange += 1
    }
    // The gain after the guard, dB, for the guard and the loop's learner.
    var level = -Double.infinity
    if let howlGuard, howlGuard.channelCount == outChannels {
      gain.update()
      level = Decibels.fromAmplitude(Double(gain.target)) ?? -.infinity
      let events = feedbackEvents
      howlGuard.process(
        destination, frameCount: frameCount,
        time: Double(timeStamp.sampleTime) / Double(format.sampleRate), gainDecibels: level
      ) { events.push($0) }
    }
    gain.scale(destination, frameCount: frameCount, channelCount: outChannels)
    if settings.isLimiting {
      for i in 0..<frameCount * outChannels { destination[i] = SoftLimiter.limit(destination[i]) }
    }
    if let loopPairs, let howlGuard, howlGuard.isIdle {
      pushPairs(
        loopPairs, played: destination, channels: outChannels, frameCount: frameCount,
        gainDecibels: level)
    }
    isSilence = false
  }

  /// Pushes (played, heard) mono pairs of this period for the learner.
  private func pushPairs(
    _ ring: SPSCRing<Float>, played: UnsafeMutablePointer<Float>, channels: Int, frameCount: Int,
    gainDecibels: Double
  ) {
    let frames = min(frameCount, pairFrames)
    let inChannels = format.channelCount
    let playedScale = 1 / Float(channels)
    let heardScale = 1 / Float(inChannels)
    for frame in 0..<frames {
      var out: Float = 0
      for channel in 0..<channels { out += played[frame * channels + channel] }
      var heard: Float = 0
      for channel in 0..<inChannels { heard += input[frame * inChannels + channel] }
      pairs[2 * frame] = out * playedScale
      // A damaged float sample must not poison the learner's sums for good.
      pairs[2 * frame + 1] = heard.isFinite ? heard * heardScale : 0
    }
    periodGain.store(gainDecibels.bitPattern, ordering: .relaxed)
    ring.push(pairs, count: 2 * frames)
  }

  /// Feeds what the loop played and heard to the learner and works on the
  /// loop's response for a while; when a response is done, offers the
  /// guard the plan it gives (control thread, about 50 times a second).
  public func learnLoop() {
    guard let learner = loopLearner, let ring = loopPairs, let howlGuard else { return }
    howlGuard.releaseRetiredPlan()
    ring.drain { samples in
      let frames = samples.count / 2
      guard frames > 0 else { return }
      learnedPlayed.removeAll(keepingCapacity: true)
      learnedHeard.removeAll(keepingCapacity: true)
      for frame in 0..<frames {
        learnedPlayed.append(samples[2 * frame])
        learnedHeard.append(samples[2 * frame + 1])
      }
      learner.append(played: learnedPlayed, heard: learnedHeard, count: frames)
      learnedSinceSolve = true
    }
    let settings = howlGuard.settings
    let frames = framesProcessed.load(ordering: .relaxed)
    guard learnedSinceSolve, learner.heardSeconds >= settings.learnedSeconds,
      learner.isSolving
        || Double(frames - solveStarted) >= settings.learnedInterval * Double(format.sampleRate)
    else { return }
    if !learner.isSolving { solveStarted = frames }
    guard let response = learner.solve(orders: Self.learningOrdersPerCall) else { return }
    learnedSinceSolve = false
    let gain = Double(bitPattern: periodGain.load(ordering: .relaxed))
    if let plan = LearnedLoop.plan(
      impulseResponse: response, delay: learner.delay,
      minimumDelay: loopDelay / learner.decimation,
      sampleRate: learner.responseRate, gainDecibels: gain,
      settings: settings, transform: &learnedTransform)
    {
      howlGuard.offerLearnedPlan(plan)
    }
  }

  /// Orders of the learner's recursion per `learnLoop` call: a few
  /// milliseconds of the control thread's 20 ms cycle.
  static let learningOrdersPerCall = 400

  /// Ends the meter and returns its summary (control thread, after stop).
  public func finishMeter(emit: (MeterEvent) -> Void) {
    meter?.finish(emit: emit)
  }
}
