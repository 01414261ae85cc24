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
  /// Seconds over which the noise floor is the minimum.
  public var noiseFloorWindow: Double = 3
  /// Lowest noise floor assumed, in dBFS (digital silence has none).
  public var minimumFloor: Double = -80

  public init() {}
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
  private var floorTracker: NoiseFloorTracker
  private let frameLength: Int
  private var frameSum: Float = 0
  private var frameFill = 0
  /// Frames while the filters and the envelope settle: not used for the floor.
  private var warmUpFrames = 3
  private let openRatio: Float
  private let closeRatio: Float
  private let minimumFloor: Float

  public init(settings: TalkDetectorSettings, envelopeRate: Double) {
    self.settings = settings
    self.envelopeRate = envelopeRate
    frameLength = max(1, Int((envelopeRate * 0.01).rounded()))
    let framesPerSecond = envelopeRate / Double(frameLength)
    floorTracker = NoiseFloorTracker(
      windowFrames: max(8, Int(settings.noiseFloorWindow * framesPerSecond)))
    minimumFloor = Float(Decibels.amplitude(settings.minimumFloor))
    let hold = Int64((settings.holdTime * envelopeRate).rounded())
    if settings.isAbsolute {
      openRatio = 1
      closeRatio = 1
      trigger = SchmittTrigger(
        openThreshold: Float(Decibels.amplitude(settings.openThreshold)),
        closeThreshold: Float(Decibels.amplitude(settings.closeThreshold)), holdSamples: hold)
    } else {
      openRatio = Float(Decibels.amplitude(settings.openThreshold))
      closeRatio = Float(Decibels.amplitude(settings.closeThreshold))
      // Until the first frame, nothing counts as talk.
      trigger = SchmittTrigger(
        openThreshold: .infinity, closeThreshold: .infinity, holdSamples: hold)
    }
  }

  /// Whether talk is in progress.
  public var isTalking: Bool { trigger.isOpen }
  /// Current noise floor estimate in dBFS, if known.
  public var noiseFloorDecibels: Double? {
    floorTracker.floor.flatMap { Decibels.fromAmplitude(Double(max($0, minimumFloor))) }
  }
  /// Current open threshold (linear).
  public var openThreshold: Float { trigger.openThreshold }
  /// Envelope samples processed.
  public var position: Int64 { trigger.position }

  /// Feeds envelope samples, calling `onTransition` for every change.
  public mutating func process(
    _ envelope: UnsafeBufferPointer<Float>, onTransition: (TalkTransition) -> Void
  ) {
    var start = 0
    while start < envelope.count {
      let end = min(envelope.count, start + frameLength - frameFill)
      let chunk = UnsafeBufferPointer(rebasing: envelope[start..<end])
      trigger.process(chunk, onTransition: onTransition)
      frameSum += Self.sum(chunk)
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

  private mutating func endFrame() {
    let mean = frameSum / Float(frameLength)
    frameSum = 0
    frameFill = 0
    guard !settings.isAbsolute else { return }
    if warmUpFrames > 0 {
      warmUpFrames -= 1
      return
    }
    floorTracker.add(mean)
    let floor = max(floorTracker.floor ?? mean, minimumFloor)
    trigger.openThreshold = floor * openRatio
    trigger.closeThreshold = floor * closeRatio
  }

  /// Ends talk in progress at the end of the stream.
  public mutating func finish() -> TalkTransition? { trigger.finish() }
}
