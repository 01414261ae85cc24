#if canImport(Glibc)
  import Glibc
#endif

/// The K-weighting of ITU-R BS.1770-4 for one channel: a high shelf of
/// about +4 dB above 1.5 kHz (the head's effect) followed by a high-pass
/// near 38 Hz (the RLB curve), both derived at any sample rate from their
/// analogue definitions by the bilinear transform, so at 48 kHz they are
/// the coefficients the standard tabulates.
///
/// Runs in double precision (the high-pass has poles very near 1).
/// Real-time safe; one caller at a time.
public struct KWeighting: Sendable {
  /// Shelf then high-pass, each (b0, b1, b2, a1, a2) with a0 = 1.
  public let shelf: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)
  public let highPass: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)
  private var x1 = 0.0, x2 = 0.0, m1 = 0.0, m2 = 0.0, y1 = 0.0, y2 = 0.0

  public init(sampleRate: Double) {
    // The shelf: centre 1681.97 Hz, gain 4.00 dB, Q 0.7072 (BS.1770-4 table 1 at 48 kHz).
    var k = tan(Double.pi * 1_681.974_450_955_533 / sampleRate)
    let vh = pow(10, 3.999_843_853_973_347 / 20)
    let vb = pow(vh, 0.499_666_774_154_541_6)
    var q = 0.707_175_236_955_419_6
    var a0 = 1 + k / q + k * k
    shelf = (
      (vh + vb * k / q + k * k) / a0, 2 * (k * k - vh) / a0, (vh - vb * k / q + k * k) / a0,
      2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0
    )
    // The high-pass: 38.14 Hz, Q 0.5003 (table 2); its numerator is 1, −2, 1.
    k = tan(Double.pi * 38.135_470_876_024_44 / sampleRate)
    q = 0.500_327_037_323_877_3
    a0 = 1 + k / q + k * k
    highPass = (1, -2, 1, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0)
  }

  /// Filters `count` samples read `stride` apart from `samples` and returns
  /// the sum of the squares of the weighted signal.
  public mutating func sumOfSquares(
    _ samples: UnsafePointer<Float>, count: Int, stride: Int
  ) -> Double {
    let s = shelf
    let h = highPass
    var (x1, x2, m1, m2, y1, y2) = (self.x1, self.x2, self.m1, self.m2, self.y1, self.y2)
    var sum = 0.0
    for index in 0..<count {
      let x = Double(samples[index * stride])
      let m = s.b0 * x + s.b1 * x1 + s.b2 * x2 - s.a1 * m1 - s.a2 * m2
      let y = m - 2 * m1 + m2 - h.a1 * y1 - h.a2 * y2
      x2 = x1
      x1 = x
      m2 = m1
      m1 = m
      y2 = y1
      y1 = y
      sum += y * y
    }
    // A decay into subnormal numbers would slow every later sample.
    if abs(y1) < 1e-30 && abs(m1) < 1e-30 && abs(x1) < 1e-30 {
      (x1, x2, m1, m2, y1, y2) = (0, 0, 0, 0, 0, 0)
    }
    (self.x1, self.x2, self.m1, self.m2, self.y1, self.y2) = (x1, x2, m1, m2, y1, y2)
    return sum
  }
}
