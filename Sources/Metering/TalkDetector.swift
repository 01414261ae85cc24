import SignalDSP

/// Settings of the talk detector. Every field has a default that works on a
/// quiet laptop microphone and in a noisy room alike.
public struct TalkDetectorSettings: Sendable, Equatable {
  /// Envelope attack time in seconds.
  public var attackTime: Double = 0.005
  /// Envelope release time in seconds.
  public var releaseTime: Double = 0.04
  /// Open threshold in dB: above the noise floor, or dBFS when `isAbsolute`.
  public var openThreshold: Double = 9
  /// Close threshold in dB: above the noise floor, or dBFS when `isAbsolute`.
  public var closeThreshold: Double = 5
  /// Seconds the envelope must stay below the close threshold before talk ends.
  public var holdTime: Double = 0.3
  /// Whether the thresholds are absolute dBFS instead of relative to the floor.
  public var isAbsolute = false
  /// Half the seconds of level history the background is read from.
  public var noiseFloorWindow: Double = 3
  /// Lowest noise floor assumed, in dBFS (digital silence has none).
  public var minimumFloor: Double = -80
  /// Shifts both thresholds down by this many dB (positive: opens on
  /// quieter talk; negative: ignores more of the background).
  public var sensitivity: Double = 0
  /// How many times the background's own fluctuation (its spread, in dB)
  /// the open threshold keeps above the background, at least.
  public var spreadFactor: Double = 2.75

  public init() {}
}

/// Why the talk detector decides as it does, at one instant: talk may open
/// while `speechDecibels` is at or above `openDecibels` and ends after the
/// hold once it stays below `closeDecibels`. All in dBFS; `nil` while the
/// detector warms up (and the floor always with absolute thresholds).
public struct TalkEvidence: Sendable, Equatable {
  /// The speech-band level with clicks removed (median of 50 ms); with
  /// absolute thresholds, the speech-band envelope.
  public var speechDecibels: Double?
  /// The background the thresholds sit on.
  public var noiseFloorDecibels: Double?
  /// The level talk must reach to open.
  public var openDecibels: Double?
  /// The level talk must fall under to end.
  public var closeDecibels: Double?

  public init(
    speechDecibels: Double? = nil, noiseFloorDecibels: Double? = nil,
    openDecibels: Double? = nil, closeDecibels: Double? = nil
  ) {
    self.speechDecibels = speechDecibels
    self.noiseFloorDecibels = noiseFloorDecibels
    self.openDecibels = openDecibels
    self.closeDecibels = closeDecibels
  }
}

/// Talk/silence decisions on a speech-band envelope: a Schmitt trigger
/// whose thresholds follow a noise-floor tracker (or stay fixed).
///
/// Feed envelope samples at `envelopeRate`; transitions come back through a
/// non-escaping closure with exact positions. No allocation after `init`;
/// real-time safe, one caller at a time.
public struct TalkDetector: Sendable {
  public let settings: TalkDetectorSettings
  /// Rate of the envelope samples.
  public let envelopeRate: Double
  private var trigger: SchmittTrigger
  private var distribution: LevelDistribution
  private var envelopeDistribution: LevelDistribution
  private let frameLength: Int
  private var frameSum: Float = 0
  private var powerSum: Float = 0
  private var frameFill = 0
  /// The last five frame powers in dB: their median ignores clicks.
  private var recentPowers = SIMD8<Float>(repeating: -140)
  private var recentIndex = 0
  private var hasLevel = false
  /// The evidence of the last frame: the click-free speech-band level, the
  /// background it is compared with and the thresholds, in dBFS.
  public private(set) var evidence = TalkEvidence()
  /// Frames while the filters and the envelope settle: not used for the floor.
  private var warmUpFrames = 3
  /// The last second of click-free levels: when it holds steady, what is
  /// there is a new background (a fan switched on), not talk.
  private var recentLevels: LevelDistribution
  private let recentCount: Int
  /// Frames since talk opened (0 while closed).
  private var talkFrames = 0
  /// The backgrounds of the band level and of the envelope, as talk in
  /// progress may move them.
  private var heldBackground = HeldBackground()
  private var heldEnvelopeBackground = HeldBackground()
  /// How steady the last `steadySeconds` must be (p90 − p10, dB) to count
  /// as background at once.
  static let steadySpread = 3.0
  static let steadySeconds = 2.0

  public init(settings: TalkDetectorSettings, envelopeRate: Double) {
    self.settings = settings
    self.envelopeRate = envelopeRate
    if settings.isAbsolute {
      evidence.openDecibels = settings.openThreshold
      evidence.closeDecibels = settings.closeThreshold
    }
    frameLength = max(1, Int((envelopeRate * 0.01).rounded()))
    let framesPerSecond = envelopeRate / Double(frameLength)
    let windowCount = max(8, Int(2 * settings.noiseFloorWindow * framesPerSecond))
    distribution = LevelDistribution(windowCount: windowCount)
    // Its own storage: a copy would share it and copy on the audio thread.
    envelopeDistribution = LevelDistribution(windowCount: windowCount)
    recentCount = max(8, Int((Self.steadySeconds * framesPerSecond).rounded()))
    recentLevels = LevelDistribution(windowCount: recentCount, tracked: (0.1, 0.9))
    let hold = Int64((settings.holdTime * envelopeRate).rounded())
    if settings.isAbsolute {
      trigger = SchmittTrigger(
        openThreshold: Float(Decibels.amplitude(settings.openThreshold)),
        closeThreshold: Float(Decibels.amplitude(settings.closeThreshold)), holdSamples: hold)
    } else {
      // Until the first frame, nothing counts as talk.
      trigger = SchmittTrigger(
        openThreshold: .infinity, closeThreshold: .infinity, holdSamples: hold)
    }
  }

  /// Whether talk is in progress.
  public var isTalking: Bool { trigger.isOpen }
  /// Current open threshold (linear).
  public var openThreshold: Float { trigger.openThreshold }
  /// Envelope samples processed.
  public var position: Int64 { trigger.position }

  /// Feeds envelope samples and, when known, the band signal's power at
  /// the same instants (without it, the envelope's square stands in),
  /// calling `onTransition` for every change.
  public mutating func process(
    _ envelope: UnsafeBufferPointer<Float>, power: UnsafeBufferPointer<Float>? = nil,
    onTransition: (TalkTransition) -> Void
  ) {
    var start = 0
    while start < envelope.count {
      let end = min(envelope.count, start + frameLength - frameFill)
      let chunk = UnsafeBufferPointer(rebasing: envelope[start..<end])
      trigger.process(chunk, onTransition: onTransition)
      frameSum += Self.sum(chunk)
      if let power {
        powerSum += Self.sum(UnsafeBufferPointer(rebasing: power[start..<end]))
      } else {
        for index in start..<end { powerSum += envelope[index] * envelope[index] }
      }
      frameFill += end - start
      if frameFill == frameLength { endFrame() }
      start = end
    }
  }

  private static func sum(_ values: UnsafeBufferPointer<Float>) -> Float {
    var lanes = SIMD4<Float>(repeating: 0)
    var index = 0
    while index + 4 <= values.count {
      lanes += SIMD4(values[index], values[index + 1], values[index + 2], values[index + 3])
      index += 4
    }
    var total = lanes.sum()
    while index < values.count {
      total += values[index]
      index += 1
    }
    return total
  }

  /// Once per 10 ms frame: update the background model and decide what
  /// the trigger may do next.
  ///
  /// The level that counts is the median of the last five frame powers
  /// (50 ms), so a click — a few ms — never counts, while a syllable
  /// (50–300 ms) does. The background is the 15th percentile of that level
  /// over twice the noise-floor window (speech pauses, so a low percentile
  /// is the background even while someone talks most of the time), and its
  /// spread is the distance from the 3rd to the 15th percentile. Talk may
  /// open only when the level stands above the background by the open
  /// threshold and by `spreadFactor` spreads, whichever is more: steady
  /// noise keeps the old thresholds; babble, traffic and music, which
  /// fluctuate by themselves, push them up by as much as they fluctuate.
  private mutating func endFrame() {
    let mean = frameSum / Float(frameLength)
    let power = powerSum / Float(frameLength)
    frameSum = 0
    powerSum = 0
    frameFill = 0
    guard !settings.isAbsolute else {
      evidence.speechDecibels = Decibels.fromAmplitude(Double(mean))
      return
    }
    if warmUpFrames > 0 {
      warmUpFrames -= 1
      return
    }
    let decibels = Float(Decibels.fromPower(Double(max(power, 1e-14))) ?? -140)
    if !hasLevel {
      // The first frame stands for the four before it, which were never heard.
      recentPowers = SIMD8(repeating: decibels)
      hasLevel = true
    }
    recentPowers[recentIndex] = decibels
    recentIndex = (recentIndex + 1) % 5
    let level = Double(Self.medianOfFive(recentPowers))
    let envelopeLevel = Decibels.fromAmplitude(Double(mean)) ?? -140
    distribution.add(level)
    envelopeDistribution.add(envelopeLevel)
    recentLevels.add(level)
    // The evidence, on click-free band power.
    let window = backgroundAndSpread(distribution, current: level)
    let envelopeWindow = backgroundAndSpread(envelopeDistribution, current: envelopeLevel)
    let talkSeconds = talkSecondsAfterThisFrame()
    let steady = steadyLevel
    let (background, spread) = heldBackground.update(
      window: window, talkSeconds: talkSeconds, steadyLevel: steady)
    let (openOffset, closeOffset) = offsets(spread: spread)
    evidence = TalkEvidence(
      speechDecibels: level, noiseFloorDecibels: background,
      openDecibels: background + openOffset, closeDecibels: background + closeOffset)
    // The trigger, on the envelope: the same rule above the envelope's own
    // background (a steady level moves to the envelope's scale by the
    // difference of the two windows' backgrounds).
    let (envelopeBackground, envelopeSpread) = heldEnvelopeBackground.update(
      window: envelopeWindow, talkSeconds: talkSeconds,
      steadyLevel: steady.map { $0 + envelopeWindow.background - window.background })
    let (envelopeOpen, envelopeClose) = offsets(spread: envelopeSpread)
    trigger.openThreshold =
      level >= background + openOffset
      ? Float(Decibels.amplitude(envelopeBackground + envelopeOpen)) : .infinity
    // Talk in progress ends on the click-free level too: key clicks keep
    // the envelope up between words, never the median of 50 ms.
    trigger.closeThreshold =
      trigger.isOpen && level < background + closeOffset
      ? .infinity : Float(Decibels.amplitude(envelopeBackground + envelopeClose))
  }

  /// Seconds talk has been open at this frame (0 on its first), `nil`
  /// while closed.
  private mutating func talkSecondsAfterThisFrame() -> Double? {
    guard trigger.isOpen else {
      talkFrames = 0
      return nil
    }
    defer { talkFrames += 1 }
    return Double(talkFrames) * Double(frameLength) / envelopeRate
  }

  /// The level of the last `steadySeconds` when they held within
  /// `steadySpread` dB (their 10th percentile): that is background whatever
  /// the window says, so a fan switched on ends talk after two seconds, not
  /// after the window. Speech never holds that steady. `nil` otherwise.
  private var steadyLevel: Double? {
    guard recentLevels.count == recentCount,
      let (low, high) = recentLevels.trackedPercentiles, high - low <= Self.steadySpread
    else { return nil }
    return low
  }

  /// The background (15th percentile, never below `minimumFloor`) of a
  /// level distribution and its spread (15th minus 3rd percentile, at least
  /// 1 dB); `current` stands in while the window is empty. When the 3rd
  /// percentile is digital silence, the background is `minimumFloor`.
  private func backgroundAndSpread(_ levels: LevelDistribution, current: Double) -> (
    background: Double, spread: Double
  ) {
    let (lowest, background) = levels.trackedPercentiles ?? (current, current)
    let floor = settings.minimumFloor
    // Digital silence in the window (a gated or synthesized recording):
    // that is the background, and it does not fluctuate. Without this the
    // words between the silences would count as background spread and push
    // the thresholds above any voice.
    if lowest <= floor { return (floor, 1) }
    return (max(floor, background), max(1, max(floor, background) - max(floor, lowest)))
  }

  /// Open and close offsets in dB above the background for a background
  /// that fluctuates by `spread` dB.
  private func offsets(spread: Double) -> (open: Double, close: Double) {
    let open =
      max(settings.openThreshold - 2, settings.spreadFactor * spread) - settings.sensitivity
    let close =
      max(settings.closeThreshold - 2, (settings.spreadFactor - 1) * spread)
      - settings.sensitivity
    return (open, min(open, close))
  }

  /// The median of the first five lanes, without branches: of the first
  /// four, drop the lowest and the highest (f and g are the two middle
  /// ones, in either order); the median of five is the median of those two
  /// and the fifth.
  static func medianOfFive(_ values: SIMD8<Float>) -> Float {
    let (a, b, c, d, e) = (values[0], values[1], values[2], values[3], values[4])
    let f = max(min(a, b), min(c, d))
    let g = min(max(a, b), max(c, d))
    return max(min(e, f), min(max(e, f), g))
  }

  /// Ends talk in progress at the end of the stream.
  public mutating func finish() -> TalkTransition? { trigger.finish() }
}
