/// A gain that moves to a new target in a straight line over a fixed number
/// of samples (no zipper noise), then holds the target exactly, with an
/// optional soft limiter so the output never exceeds full scale.
///
/// The linear gain is the stored value; decibels are a view. Real-time
/// safe; set targets from the thread that calls `process` (cross-thread
/// targets travel through an atomic owned by the caller).
public struct GainRamp: Sendable {
  /// Gain applied to the most recent sample (linear).
  public private(set) var current: Float
  /// Gain the ramp is heading to (linear).
  public private(set) var target: Float
  /// Samples a change takes.
  public let rampSamples: Int
  /// Whether `process` soft-limits its output to ±1.
  public var isLimiting: Bool
  private var step: Float = 0
  private var remaining = 0

  public init(gain: Float = 1, rampSamples: Int, isLimiting: Bool = false) {
    current = gain
    target = gain
    self.rampSamples = max(0, rampSamples)
    self.isLimiting = isLimiting
  }

  /// The target gain in dB.
  public var targetDecibels: Double { Decibels.fromAmplitude(Double(target)) ?? -.infinity }

  /// Starts a ramp from the current gain to `gain` (linear).
  public mutating func setTarget(_ gain: Float) {
    target = gain
    if rampSamples == 0 || gain == current {
      current = gain
      remaining = 0
    } else {
      remaining = rampSamples
      step = (gain - current) / Float(rampSamples)
    }
  }

  /// Starts a ramp to `decibels` dB.
  public mutating func setTarget(decibels: Double) {
    setTarget(Float(Decibels.amplitude(decibels)))
  }

  /// Applies the gain (and the limiter, when on) to `buffer` in place.
  public mutating func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
    var index = 0
    let count = buffer.count
    while remaining > 0 && index < count {
      remaining -= 1
      current = remaining == 0 ? target : current + step
      buffer[index] *= current
      index += 1
    }
    let gain = current
    while index < count {
      buffer[index] *= gain
      index += 1
    }
    if isLimiting {
      for i in 0..<count { buffer[i] = SoftLimiter.limit(buffer[i]) }
    }
  }
}

/// A soft limiter: transparent below the knee, then a smooth curve that
/// approaches but never reaches full scale, so passthrough never wraps.
public enum SoftLimiter {
  /// Level (linear) below which samples pass unchanged.
  public static let knee: Float = 0.8

  /// Limits one sample to [−1, 1] (NaN becomes silence).
  @inlinable @inline(__always)
  public static func limit(_ x: Float) -> Float {
    let magnitude = abs(x)
    guard magnitude > knee else { return x.isNaN ? 0 : x }
    guard magnitude.isFinite else { return x > 0 ? 1 : -1 }
    let headroom = 1 - knee
    let shaped = knee + headroom * tanhApproximation((magnitude - knee) / headroom)
    return x < 0 ? -shaped : shaped
  }

  /// tanh through a Padé form; exact at 0, slope 1 there, saturates at 1.
  @inlinable @inline(__always)
  static func tanhApproximation(_ x: Float) -> Float {
    if x >= 4.97 { return 1 }
    let x2 = x * x
    let result =
      x * (135_135 + x2 * (17_325 + x2 * (378 + x2)))
      / (135_135 + x2 * (62_370 + x2 * (3_150 + x2 * 28)))
    return min(result, 1)
  }
}
