#if canImport(Glibc)
  import Glibc
#endif

/// A second-order IIR section in direct form I.
///
/// Direct form I keeps one multiply and one add on the sample-to-sample
/// dependency chain (transposed form II has two adds), which matters when
/// the chain, not arithmetic, bounds the speed.
///
/// Coefficients follow the RBJ audio-EQ cookbook, normalised so a0 = 1.
/// Construct at configuration time; `process` is real-time safe.
public struct Biquad: Sendable {
  public let b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
  @usableFromInline package var x1: Float = 0
  @usableFromInline package var x2: Float = 0
  @usableFromInline package var y1: Float = 0
  @usableFromInline package var y2: Float = 0

  public init(b0: Double, b1: Double, b2: Double, a0: Double, a1: Double, a2: Double) {
    self.b0 = Float(b0 / a0)
    self.b1 = Float(b1 / a0)
    self.b2 = Float(b2 / a0)
    self.a1 = Float(a1 / a0)
    self.a2 = Float(a2 / a0)
  }

  /// A high-pass section with cutoff `frequency` and quality `q`.
  public static func highPass(frequency: Double, q: Double, sampleRate: Double) -> Biquad {
    let w = 2 * Double.pi * frequency / sampleRate
    let alpha = sin(w) / (2 * q)
    let c = cos(w)
    return Biquad(
      b0: (1 + c) / 2, b1: -(1 + c), b2: (1 + c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
  }

  /// A low-pass section with cutoff `frequency` and quality `q`.
  public static func lowPass(frequency: Double, q: Double, sampleRate: Double) -> Biquad {
    let w = 2 * Double.pi * frequency / sampleRate
    let alpha = sin(w) / (2 * q)
    let c = cos(w)
    return Biquad(
      b0: (1 - c) / 2, b1: 1 - c, b2: (1 - c) / 2, a0: 1 + alpha, a1: -2 * c, a2: 1 - alpha)
  }

  /// Filters one sample.
  @inlinable @inline(__always)
  public mutating func process(_ x: Float) -> Float {
    let independent = (b0 * x + b1 * x1 + b2 * x2) - a2 * y2
    let y = independent - a1 * y1
    x2 = x1
    x1 = x
    y2 = y1
    y1 = y
    return y
  }

  /// Filters `buffer` in place.
  public mutating func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
    for index in buffer.indices { buffer[index] = process(buffer[index]) }
  }

  /// Gain of the section at `frequency` (linear), for checks and tests.
  public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
    let w = 2 * Double.pi * frequency / sampleRate
    func poly(_ c0: Double, _ c1: Double, _ c2: Double) -> Double {
      let re = c0 + c1 * cos(w) + c2 * cos(2 * w)
      let im = -(c1 * sin(w) + c2 * sin(2 * w))
      return (re * re + im * im).squareRoot()
    }
    return poly(Double(b0), Double(b1), Double(b2)) / poly(1, Double(a1), Double(a2))
  }
}
