import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// A feedback loop's open-loop frequency response on a fine grid, and the
/// frequencies where it can ring: where its phase is a whole number of
/// turns (the imaginary part changes sign with the real part positive).
/// At such a crossing the loop howls once the gain reaches 1 / |response|.
///
/// The impulse response is transformed on a grid at least eight times
/// finer than its length, so the phase turns slowly from point to point;
/// a crossing's gain is interpolated between its two points. The response
/// may be multiplied by filters in the loop (`multiply`) before crossings
/// are read again. Control thread.
public struct LoopSpectrum: Sendable {
  /// A frequency where the loop's phase is a whole number of turns.
  public struct Crossing: Sendable, Equatable {
    /// The loop's gain there (linear, at unity broadband gain).
    public var gain: Double
    public var frequency: Double
  }

  public let sampleRate: Double
  /// Hz between grid points.
  public let binWidth: Double
  /// Grid index of `real[0]` (the lowest frequency read).
  public let firstBin: Int
  public private(set) var real: [Double]
  public private(set) var imaginary: [Double]
  /// Radians per sample between grid points.
  private let radiansPerBin: Double
  /// cos w and sin w of each grid point (w in radians per sample), made by
  /// the first `multiply` (reading crossings alone never needs them).
  private var cosines: [Double] = []
  private var sines: [Double] = []

  /// The response of `impulseResponse` delayed by `delay` frames, between
  /// `lowest` and `highest` Hz (by default up to the Nyquist frequency);
  /// `nil` when that band is empty.
  public init?(
    impulseResponse: [Float], sampleRate: Double, delay: Int = 0, lowest: Double,
    highest: Double? = nil
  ) {
    var transform: RealFourierTransform?
    self.init(
      impulseResponse: impulseResponse, sampleRate: sampleRate, delay: delay, lowest: lowest,
      highest: highest, workingIn: &transform)
  }

  /// The same, worked out in `transform`, which is made (or made again at
  /// another size) only when it does not have the size needed: a caller
  /// that keeps it does not plan an FFT for every response.
  public init?(
    impulseResponse: [Float], sampleRate: Double, delay: Int = 0, lowest: Double,
    highest: Double? = nil, workingIn kept: inout RealFourierTransform?
  ) {
    let length = impulseResponse.count + max(0, delay)
    var size = 1 << 16
    while size < 8 * length { size <<= 1 }
    if kept?.size != size { kept = RealFourierTransform(size: size) }
    let transform = kept!
    transform.real.update(repeating: 0, count: size)
    for index in impulseResponse.indices where index + delay >= 0 && index + delay < size {
      transform.real[index + delay] = impulseResponse[index]
    }
    transform.forward()
    binWidth = sampleRate / Double(size)
    let first = max(1, Int((lowest / binWidth).rounded(.up)))
    let last = min(
      transform.binCount - 2, Int(((highest ?? sampleRate / 2) / binWidth).rounded(.down)))
    guard first < last else { return nil }
    self.sampleRate = sampleRate
    firstBin = first
    let values = transform.complex
    // One point past `last`, so that a crossing just under it is found.
    real = (first...last).map { Double(values[2 * $0]) }
    imaginary = (first...last).map { Double(values[2 * $0 + 1]) }
    radiansPerBin = 2 * Double.pi / Double(size)
  }

  /// Frequency of grid point `index` (of `real` and `imaginary`).
  public func frequency(at index: Int) -> Double { Double(firstBin + index) * binWidth }

  /// The crossing with the largest gain: where the loop howls first.
  public var worstCrossing: Crossing? { crossings().max { $0.gain < $1.gain } }

  /// Every crossing, lowest frequency first.
  public func crossings() -> [Crossing] {
    var found = [Crossing]()
    guard real.count >= 2 else { return found }
    for index in 0..<(real.count - 1) {
      let here = imaginary[index]
      let next = imaginary[index + 1]
      guard (here <= 0) != (next <= 0), real[index] > 0 else { continue }
      let fraction = here / (here - next)
      let gainHere = (real[index] * real[index] + here * here).squareRoot()
      let gainNext = (real[index + 1] * real[index + 1] + next * next).squareRoot()
      found.append(
        Crossing(
          gain: gainHere + fraction * (gainNext - gainHere),
          frequency: (Double(firstBin + index) + fraction) * binWidth))
    }
    return found
  }

  /// Sets the response to zero within `octaves` of `frequency`, so that no
  /// crossing is read there (a band the response cannot be trusted in).
  public mutating func silence(near frequency: Double, octaves: Double) {
    let low = frequency * pow(2, -octaves) / binWidth - Double(firstBin)
    let high = frequency * pow(2, octaves) / binWidth - Double(firstBin)
    let first = max(0, Int(low.rounded(.down)))
    let last = min(real.count - 1, Int(high.rounded(.up)))
    guard first <= last else { return }
    for index in first...last {
      real[index] = 0
      imaginary[index] = 0
    }
  }

  /// Multiplies the response by a filter's, given as a function of
  /// `(cos w, sin w)` at each grid point (w in radians per sample).
  public mutating func multiply(
    by response: (_ cosine: Double, _ sine: Double) -> (re: Double, im: Double)
  ) {
    if cosines.isEmpty {
      cosines = real.indices.map { cos(Double(firstBin + $0) * radiansPerBin) }
      sines = real.indices.map { sin(Double(firstBin + $0) * radiansPerBin) }
    }
    for index in real.indices {
      let (re, im) = response(cosines[index], sines[index])
      let oldRe = real[index]
      real[index] = oldRe * re - imaginary[index] * im
      imaginary[index] = oldRe * im + imaginary[index] * re
    }
  }
}
