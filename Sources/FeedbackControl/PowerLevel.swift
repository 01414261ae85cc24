/// A power in decibels (10·log10), computed without a call into the C
/// library: the howl detector takes the level of every bin of every frame,
/// where `log10f` cost half its time. Within 1e-4 dB of `10 * log10(x)`
/// for every positive normal `Float`. Pure; any thread.
enum PowerLevel {
  /// 10·log10(2): decibels per octave of power.
  private static let decibelsPerOctave: Float = 3.010_299_956_6
  /// 2/ln(2): the series below gives log2 from it.
  private static let seriesScale: Float = 2.885_390_081_8
  /// √2: mantissas above it are halved, so the series runs on |t| ≤ 0.172.
  private static let squareRootOfTwo: Float = 1.414_213_562_4

  /// `10 * log10(power)` for a positive normal `power`.
  @inline(__always)
  static func decibels(_ power: Float) -> Float {
    let bits = power.bitPattern
    let whole = Float(bitPattern: (bits & 0x7f_ffff) | 0x3f80_0000)
    // Without a branch, so that a loop of these runs several at a time.
    let isHigh = whole > squareRootOfTwo
    let mantissa = isHigh ? whole * 0.5 : whole
    let exponent = Float(Int32(bitPattern: (bits >> 23) & 0xff) - (isHigh ? 126 : 127))
    // log2(m) = 2/ln2 · atanh(t), t = (m − 1)/(m + 1): four odd terms.
    let t = (mantissa - 1) / (mantissa + 1)
    let t2 = t * t
    let series = t * (1 + t2 * (1 / 3 + t2 * (1 / 5 + t2 * (1 / 7))))
    return decibelsPerOctave * (exponent + seriesScale * series)
  }
}
