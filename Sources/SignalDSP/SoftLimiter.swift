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
