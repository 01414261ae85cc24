import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// The band-pass a notch of `NotchBank` takes away from the signal: RBJ's
/// constant-peak band-pass (0 dB and no phase shift at its centre,
/// bandwidth `frequency / quality`). The bank filters with these
/// coefficients; the ring-out plan evaluates the same shape in the
/// frequency domain. Any thread.
public struct NotchShape: Sendable, Equatable {
  public let b0: Double
  public let a1: Double
  public let a2: Double

  public init(frequency: Double, quality: Double, sampleRate: Double) {
    let w = 2 * Double.pi * frequency / sampleRate
    let alpha = sin(w) / (2 * quality)
    b0 = alpha / (1 + alpha)
    a1 = -2 * cos(w) / (1 + alpha)
    a2 = (1 - alpha) / (1 + alpha)
  }

  /// The band-pass's complex response `b0 (1 − z⁻²) / (1 + a1 z⁻¹ + a2 z⁻²)`
  /// at `z = e^{jw}`, given `cos w` and `sin w`.
  @inline(__always)
  public func bandPass(cosine c: Double, sine s: Double) -> (re: Double, im: Double) {
    let cos2 = 2 * c * c - 1
    let sin2 = 2 * s * c
    let numRe = b0 * (1 - cos2)
    let numIm = b0 * sin2
    let denRe = 1 + a1 * c + a2 * cos2
    let denIm = -(a1 * s + a2 * sin2)
    let denPower = denRe * denRe + denIm * denIm
    return ((numRe * denRe + numIm * denIm) / denPower, (numIm * denRe - numRe * denIm) / denPower)
  }

  /// The notch's response `1 − amount · bandPass` (amount = 1 − 10^(−depth/20)).
  @inline(__always)
  public func notch(amount: Double, cosine c: Double, sine s: Double) -> (re: Double, im: Double) {
    let band = bandPass(cosine: c, sine: s)
    return (1 - amount * band.re, -amount * band.im)
  }

  /// The proportion of the band taken away for a cut of `depth` dB.
  public static func amount(forDepth depth: Double) -> Double { 1 - pow(10, -max(0, depth) / 20) }
}
