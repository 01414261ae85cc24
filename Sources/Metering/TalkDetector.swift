import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// Settings of the talk detector. Every field has a default that works on a
/// quiet laptop microphone and in a noisy room alike; Docs/dsp/talk-detection.md
/// explains each one.
public struct TalkDetectorSettings: Sendable, Equatable {
  // The envelope the trigger follows.

  /// Envelope attack time in seconds.
  public var attackTime: Double = 0.012
  /// Envelope release time in seconds.
  public var releaseTime: Double = 0.025

  // The trigger.

  /// Open threshold in dB: the least the envelope must stand above the
  /// background for talk to open, or dBFS when `isAbsolute`.
  public var openThreshold: Double = 4
  /// Close threshold in dB: the least above the background that keeps talk
  /// open, or dBFS when `isAbsolute`.
  public var closeThreshold: Double = 1.2
  /// Seconds the envelope must stay below the close threshold before talk ends.
  public var holdTime: Double = 0.4
  /// Whether the thresholds are absolute dBFS instead of relative to the
  /// background (which is then not followed).
  public var isAbsolute = false
  /// Shifts both thresholds down by this many dB (positive: opens on
  /// quieter talk; negative: ignores more of the background).
  public var sensitivity: Double = 0
  /// How many of the background's own spreads (dB) the open threshold
  /// keeps above it, at least: a room that fluctuates by itself needs more.
  public var spreadFactor: Double = 1.42
  /// The same for the close threshold.
  public var closeSpreadFactor: Double = 0.87
  /// dB below the loudest envelope of the talk in progress at which it
  /// may end: the talker's own reverberation and the room under their
  /// pauses do not hold it open.
  public var peakRange: Double = 9
  /// Talk opens only within this many dB of the loudest talk heard lately
  /// (`foregroundFade`), so a talker's echo or a distant voice just after
  /// loud talk does not open it.
  public var foregroundRange: Double = 25
  /// dB a second the loudest talk heard lately fades by.
  public var foregroundFade: Double = 3

  // The background (`HeldBackground`).

  /// Time constant in seconds of the background's average.
  public var backgroundTime: Double = 2
  /// The background falls this many times slower than it rises (0…1).
  public var backgroundFallFactor: Double = 0.64
  /// Until talk first opens after the room was learned, dB below the
  /// background beyond which a frame is plainly the room in a pause: the
  /// background falls to it within `quietFallTime` instead (a stream
  /// started mid-sentence learned the talker as its room; it comes down
  /// in the first pause, not minutes later).
  public var quietFallDepth: Double = 15
  /// Time constant in seconds of that fall.
  public var quietFallTime: Double = 0.2
  /// dB above the background within which a frame counts as background
  /// while talk is open (and up to which any frame counts while closed).
  public var backgroundMargin: Double = 2.25
  /// Time constant in seconds of the spread's average.
  public var spreadTime: Double = 0.17
  /// Deepest dip below the background, in dB, that the spread counts.
  public var spreadLimit: Double = 6.6
  /// The spread assumed before any frame was heard, in dB.
  public var initialSpread: Double = 2.5
  /// Seconds at the start of a stream in which the room is learned; talk
  /// does not open before.
  public var learningTime: Double = 1.5
  /// Seconds of digital silence (below `minimumFloor`) at the start of a
  /// stream after which talk may open while the room is still learned: a
  /// file of prompts or a gated recording has no room to learn.
  public var silentStart: Double = 0.2
  /// Time constant in seconds of the background while the room is learned.
  public var learningTimeConstant: Double = 0.023
  /// Seconds at the end of learning during which talk that opened on a
  /// stream's digital silence stayed clear of the background, after which
  /// it is taken for the room (its mean level in dB becomes the background): a
  /// word has pauses within that time, a room's babble does not.
  public var learnedRoomTime: Double = 0.5
  /// Seconds of talk without a frame near the background after which the
  /// background starts to rise (the room got louder).
  public var escapeTime: Double = 3.1
  /// dB a second the background rises by after `escapeTime`.
  public var escapeRate: Double = 4.1
  /// Lowest background assumed, in dBFS (digital silence has none).
  public var minimumFloor: Double = -80
  /// Seconds a level must hold within `steadySpread` to be taken for a new
  /// background at once (a fan switched on), whatever talk is doing.
  public var steadyTime: Double = 2
  /// dB from the 10th to the 90th percentile of the click-free level over
  /// `steadyTime` under which it counts as steady. Speech never holds this
  /// still: its syllables come and go by 10 dB and more.
  public var steadySpread: Double = 2
  /// dB from the 10th to the 90th percentile of the click-free level around
  /// its straight-line trend over `steadyTime` under which it counts as a
  /// swell (traffic passing, a machine spinning up): background at once,
  /// at the line's level. Speech strays from any line by 10 dB and more
  /// within a second.
  public var swellSpread: Double = 3.5
  /// Seconds of a steady level (within `steadySpread`, 10th to 90th
  /// percentile, from the stream's first frame) after which the room
  /// counts as learned, however much of `learningTime` is left: talk that
  /// begins after it is heard from its first syllable instead of being
  /// learned as the room (which then hid the next seconds of talk). A room
  /// that fluctuates (babble, music) is learned for the whole
  /// `learningTime` — half a second of a café can hold within 2 dB, most
  /// of a second does not; a stream that begins in digital silence keeps
  /// its own rule (`silentStart`).
  public var steadyLearningTime: Double = 0.8

  public init() {}
}

/// Why the talk detector decides as it does, at one instant: talk may open
/// while `speechDecibels` is at or above `openDecibels` and ends after the
/// hold once it stays below `closeDecibels`. All in dBFS; `nil` before the
/// first 10 ms frame (the floor always with absolute thresholds).
public struct TalkEvidence: Sendable, Equatable {
  /// The speech band's click-free envelope: what the trigger compares.
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

/// Talk/silence decisions on the speech band, one 10 ms frame at a time: an
/// envelope follower on the frame's click-free level drives a Schmitt
/// trigger with hold whose thresholds sit on a background that talk cannot
/// drag up (`HeldBackground`), or stay fixed.
///
/// Feed frame powers (`process(framePower:)`) or band samples at
/// `envelopeRate`; transitions come back with positions in samples at that
/// rate, dated to the frame. No allocation after `init`; real-time safe,
/// one caller at a time.
public struct TalkDetector: Sendable {
  public let settings: TalkDetectorSettings
  /// Rate of the band samples.
  public let envelopeRate: Double
  /// Band samples per frame (10 ms).
  public let frameLength: Int
  /// The last five frame powers: their median ignores clicks.
  private var recentPowers = SIMD8<Double>(repeating: 0)
  private var recentIndex = 0
  private var framesHeard: Int64 = 0
  private var follower: EnvelopeFollower
  private var trigger: SchmittTrigger
  private var background: HeldBackground
  /// The loudest envelope of the talk in progress, in dB.
  private var talkPeak = -Double.infinity
  /// The loudest talk heard lately, fading by `foregroundFade`, in dB.
  private var foreground = -Double.infinity
  private let foregroundStep: Double
  /// The click-free level of the last `steadyTime`, to tell a steady new
  /// noise (a fan switched on) at once.
  private var recentLevels: LevelDistribution
  /// The same levels' straight-line trend, to tell a noise that swells or
  /// fades smoothly (traffic passing) at once.
  private var recentTrend: LevelTrend
  private let steadyCount: Int
  private let steadyLearningCount: Int
  /// Frames of digital silence the stream began with (counted until the
  /// first sound).
  private var silentFrames = 0
  private var heardSound = false
  private let silentStartFrames: Int
  private let floorPower: Double
  /// The background after the last frame, in dB.
  private var backgroundDecibels: Double?
  /// Partial frame of `process(_:onTransition:)`.
  private var partialSum: Double = 0
  private var partialCount = 0
  /// The evidence of the last frame.
  public private(set) var evidence = TalkEvidence()

  /// The 10th-to-90th percentile spread of a normal distribution, in
  /// standard deviations: `swellSpread` for a level around a trend.
  static let spreadPerDeviation = 2.563
  /// The full-scale envelope: no threshold lies above it.
  static let fullScale = 0.0
  /// Seconds per frame.
  public static let frameDuration = 0.01
  /// Frames the click-free level lags the frames it is the median of (the
  /// middle of five): transitions are dated back by it.
  static let medianLag: Int64 = 2

  public init(settings: TalkDetectorSettings, envelopeRate: Double) {
    self.settings = settings
    self.envelopeRate = envelopeRate
    frameLength = max(1, Int((envelopeRate * Self.frameDuration).rounded()))
    let frame = Double(frameLength) / envelopeRate
    follower = EnvelopeFollower(
      attackTime: settings.attackTime, releaseTime: settings.releaseTime, sampleRate: 1 / frame)
    background = HeldBackground(settings: settings, frameDuration: frame)
    steadyCount = max(8, Int((settings.steadyTime / frame).rounded()))
    steadyLearningCount = max(8, Int((settings.steadyLearningTime / frame).rounded()))
    silentStartFrames = Int((settings.silentStart / frame).rounded())
    floorPower = pow(10, settings.minimumFloor / 10)
    recentLevels = LevelDistribution(
      windowCount: settings.isAbsolute ? 1 : steadyCount, tracked: (0.1, 0.9))
    recentTrend = LevelTrend(windowCount: settings.isAbsolute ? 1 : steadyCount)
    foregroundStep = settings.foregroundFade * frame
    let hold = Int64((settings.holdTime / frame).rounded())
    if settings.isAbsolute {
      evidence.openDecibels = settings.openThreshold
      evidence.closeDecibels = settings.closeThreshold
      trigger = SchmittTrigger(
        openThreshold: Float(settings.openThreshold),
        closeThreshold: Float(settings.closeThreshold),
        holdSamples: hold)
    } else {
      trigger = SchmittTrigger(
        openThreshold: .infinity, closeThreshold: .infinity, holdSamples: hold)
    }
  }

  /// Whether talk is in progress.
  public var isTalking: Bool { trigger.isOpen }
  /// Band samples covered by the frames processed.
  public var position: Int64 { framesHeard * Int64(frameLength) }

  /// Feeds band samples of one channel (squared and framed here), calling
  /// `onTransition` for every change.
  public mutating func process(
    _ band: UnsafeBufferPointer<Float>, onTransition: (TriggerTransition) -> Void
  ) {
    for sample in band {
      partialSum += Double(sample) * Double(sample)
      partialCount += 1
      if partialCount == frameLength {
        let power = partialSum / Double(frameLength)
        partialSum = 0
        partialCount = 0
        if let transition = process(framePower: power) { onTransition(transition) }
      }
    }
  }

  /// Feeds one frame: the mean square of its `frameLength` band samples
  /// (the loudest channel's). Returns the transition it causes, if any.
  public mutating func process(framePower: Double) -> TriggerTransition? {
    // Click-free: the median of the last five frames (50 ms), so a key
    // click — a few milliseconds — never counts, while a syllable does.
    let power =
      framePower.isFinite ? max(framePower, HeldBackground.silentPower) : HeldBackground.silentPower
    if framesHeard == 0 { recentPowers = SIMD8(repeating: power) }
    recentPowers[recentIndex] = power
    recentIndex = recentIndex == 4 ? 0 : recentIndex + 1
    let clickFree = Self.medianOfFive(recentPowers)
    let envelope = Double(follower.process(Float(clickFree.squareRoot())))
    let speech = 20 * log10(max(envelope, 1e-7))
    framesHeard += 1
    guard !settings.isAbsolute else {
      evidence.speechDecibels = speech
      return frameTransition(trigger.process(Float(speech)))
    }
    let level = 10 * log10(clickFree)
    if !heardSound {
      if clickFree < floorPower { silentFrames += 1 } else { heardSound = true }
    }
    // While the room is learned, nothing opens — unless the stream began
    // in digital silence.
    let learning = background.isLearning
    let mayOpen = !learning || silentFrames >= silentStartFrames
    background.update(
      power: clickFree, decibels: level, background: backgroundDecibels ?? level,
      isTalking: trigger.isOpen)
    recentLevels.add(level)
    if learning, !mayOpen, recentLevels.count >= steadyLearningCount,
      let (low, high) = recentLevels.trackedPercentiles, low > settings.minimumFloor,
      high - low <= settings.steadySpread
    {
      // Steady since the first frame: the room is learned.
      background.finishLearning()
    }
    if !learning, recentLevels.count == steadyCount,
      let (low, high) = recentLevels.trackedPercentiles, high - low <= settings.steadySpread
    {
      background.raise(to: pow(10, low / 10))
    }
    recentTrend.add(level)
    if !learning, recentTrend.isFull, let trend = recentTrend.fit,
      trend.deviation * Self.spreadPerDeviation <= settings.swellSpread
    {
      // Steady around a line: a swell, whose level on the line at this
      // frame is the background — its own ups, which the spread (measured
      // below the background) does not see, then stay under the open
      // threshold.
      background.raise(to: pow(10, trend.level / 10))
    }
    let backgroundLevel = 10 * log10(background.power)
    backgroundDecibels = backgroundLevel
    let floor = max(settings.minimumFloor, backgroundLevel)
    let spread = background.spread
    foreground -= foregroundStep
    if trigger.isOpen { foreground = max(foreground, speech) }
    var open = max(
      floor + max(settings.openThreshold, settings.spreadFactor * spread),
      foreground - settings.foregroundRange)
    var close = floor + max(settings.closeThreshold, settings.closeSpreadFactor * spread)
    if trigger.isOpen {
      talkPeak = max(talkPeak, speech)
      close = max(close, talkPeak - settings.peakRange)
    }
    open = min(Self.fullScale, open - settings.sensitivity)
    close = min(open, close - settings.sensitivity)
    evidence = TalkEvidence(
      speechDecibels: speech, noiseFloorDecibels: floor, openDecibels: mayOpen ? open : nil,
      closeDecibels: close)
    trigger.openThreshold = mayOpen ? Float(open) : .infinity
    trigger.closeThreshold = Float(close)
    let transition = trigger.process(Float(speech))
    if let transition, transition.isStart {
      talkPeak = speech
      foreground = max(foreground, speech)
    }
    return frameTransition(transition)
  }

  /// A transition of the trigger (in frames) in band samples.
  private func frameTransition(_ transition: TriggerTransition?) -> TriggerTransition? {
    guard var transition else { return nil }
    // Where it happened is dated back by the median's lag; when it was
    // decided is not.
    transition.position = max(0, transition.position - Self.medianLag) * Int64(frameLength)
    transition.decisionPosition *= Int64(frameLength)
    return transition
  }

  /// The median of the first five lanes, without branches: of the first
  /// four, drop the lowest and the highest (f and g are the two middle
  /// ones, in either order); the median of five is the median of those two
  /// and the fifth.
  static func medianOfFive<T: SIMDScalar & Comparable>(_ values: SIMD8<T>) -> T {
    let (a, b, c, d, e) = (values[0], values[1], values[2], values[3], values[4])
    let f = max(min(a, b), min(c, d))
    let g = min(max(a, b), max(c, d))
    return max(min(e, f), min(max(e, f), g))
  }

  /// Ends talk in progress at the end of the stream.
  public mutating func finish() -> TriggerTransition? { frameTransition(trigger.finish()) }
}
