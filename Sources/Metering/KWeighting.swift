#if canImport(Glibc)
  import Glibc
#endif

/// The K-weighting of ITU-R BS.1770-4 for up to two channels at once: a
/// high shelf of about +4 dB above 1.5 kHz (the head's effect) followed by
/// a high-pass near 38 Hz (the RLB curve), both derived at any sample rate
/// from their analogue definitions by the bilinear transform, so at 48 kHz
/// they are the coefficients the standard tabulates.
///
/// Runs in double precision (the high-pass has poles very near 1), the two
/// channels in the two lanes of one vector: each filter is a chain from
/// one sample to the next, and two chains side by side cost one.
/// Real-time safe; one caller at a time (the thread that runs the loudness meter).
public struct KWeighting: Sendable {
  /// Shelf then high-pass, each (b0, b1, b2, a1, a2) with a0 = 1.
  public let shelf: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)
  public let highPass: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)
  private var x1 = SIMD2<Double>(), x2 = SIMD2<Double>()
  private var m1 = SIMD2<Double>(), m2 = SIMD2<Double>()
  private var y1 = SIMD2<Double>(), y2 = SIMD2<Double>()

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
    // An unoptimised build sets up the generic types `settle` compares with
    // on first use: let that be here, not on the audio thread.
    settle()
  }

  /// Filters `count` frames of interleaved audio with `stride` samples per
  /// frame, channel `first` in lane 0 and, when `pair`, channel `first + 1`
  /// in lane 1; returns `sums` plus the squares of the weighted signals,
  /// added one by one (so a run cut into calls sums to the same bits).
  public mutating func sumsOfSquares(
    _ samples: UnsafePointer<Float>, first: Int, pair: Bool, count: Int, stride: Int,
    adding sums: SIMD2<Double> = .zero
  ) -> SIMD2<Double> {
    let (b0, b1, b2) = (
      SIMD2(repeating: shelf.b0), SIMD2(repeating: shelf.b1), SIMD2(repeating: shelf.b2)
    )
    let (a1, a2) = (SIMD2(repeating: shelf.a1), SIMD2(repeating: shelf.a2))
    let (c1, c2) = (SIMD2(repeating: highPass.a1), SIMD2(repeating: highPass.a2))
    var (x1, x2, m1, m2, y1, y2) = (self.x1, self.x2, self.m1, self.m2, self.y1, self.y2)
    var sums = sums
    let second = pair ? first + 1 : first
    for index in 0..<count {
      let frame = samples + index * stride
      let x = SIMD2(Double(frame[first]), pair ? Double(frame[second]) : 0)
      let m = b0 * x + b1 * x1 + b2 * x2 - a1 * m1 - a2 * m2
      let y = m - 2 * m1 + m2 - c1 * y1 - c2 * y2
      x2 = x1
      x1 = x
      m2 = m1
      m1 = m
      y2 = y1
      y1 = y
      sums += y * y
    }
    (self.x1, self.x2, self.m1, self.m2, self.y1, self.y2) = (x1, x2, m1, m2, y1, y2)
    return sums
  }

  /// Values below this in every state variable are set to zero by `settle`.
  private static let negligible = 1e-30

  /// Sets the state to zero once the signal has died away: a decay into
  /// subnormal numbers would slow every later sample. Call it at points of
  /// the stream that do not depend on how it is cut into calls (the
  /// loudness meter's 100 ms steps), so the output does not either.
  public mutating func settle() {
    let tiny = SIMD2<Double>(repeating: Self.negligible)
    if all(
      (y1 .< tiny) .& (y1 .> -tiny) .& (m1 .< tiny) .& (m1 .> -tiny) .& (x1 .< tiny)
        .& (x1 .> -tiny))
    {
      (x1, x2, m1, m2, y1, y2) = (.zero, .zero, .zero, .zero, .zero, .zero)
    }
  }
}
