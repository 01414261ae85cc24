#if canImport(Glibc)
  import Glibc
#endif

/// How much gain a feedback loop takes before it howls, read from its
/// open-loop impulse response (speaker input to microphone output, with
/// every delay of the loop in it): the loop `mic = talker + F · out`,
/// `out = K · mic` rings without end once `K · F(f) = 1` at some
/// frequency, that is where F's phase is a whole number of turns and
/// `K ≥ 1 / |F(f)|`. The maximum stable gain is therefore
/// `−20 log10 max |F|` over the frequencies where the phase crosses zero,
/// and the frequency of that maximum is the one that howls first.
///
/// The response is transformed on a grid at least eight times finer than
/// its length (so the phase turns slowly from point to point); a crossing
/// is where the imaginary part changes sign with the real part positive,
/// its gain interpolated between the two points. Control thread.
public struct LoopStability: Sendable, Equatable {
  /// The largest broadband gain (dB) at which the loop is still stable.
  public var maximumStableGain: Double
  /// The frequency (Hz) that howls first when the gain passes it.
  public var frequency: Double
  /// Crossings whose margin is within 3 dB of the smallest: how many
  /// frequencies wait in line behind the first.
  public var crossingsWithin3dB: Int

  public init(maximumStableGain: Double, frequency: Double, crossingsWithin3dB: Int) {
    self.maximumStableGain = maximumStableGain
    self.frequency = frequency
    self.crossingsWithin3dB = crossingsWithin3dB
  }

  /// The lowest frequency considered (below it, a loop's transducers pass nothing).
  public static let lowestFrequency = 20.0

  /// The stability of the loop whose open-loop response is `impulseResponse`
  /// delayed by `delay` frames, read between `lowest` and `highest` Hz
  /// (where the response was measured; by default the whole band from
  /// `lowestFrequency`); `nil` when the response is silent there.
  public static func analyze(
    impulseResponse: [Float], sampleRate: Double, delay: Int = 0,
    lowest: Double = lowestFrequency, highest: Double? = nil
  ) -> LoopStability? {
    let length = impulseResponse.count + max(0, delay)
    var size = 1 << 16
    while size < 8 * length { size <<= 1 }
    let transform = RealFourierTransform(size: size)
    transform.real.update(repeating: 0, count: size)
    for index in impulseResponse.indices where index + delay >= 0 {
      transform.real[index + delay] = impulseResponse[index]
    }
    transform.forward()
    let values = transform.complex
    let binWidth = sampleRate / Double(size)
    let first = max(1, Int((lowest / binWidth).rounded(.up)))
    let last = min(
      transform.binCount - 2, Int(((highest ?? sampleRate / 2) / binWidth).rounded(.down)))
    guard first < last else { return nil }
    var crossings = [(gain: Double, frequency: Double)]()
    var previousImaginary = Double(values[2 * first + 1])
    for bin in first..<last {
      let nextImaginary = Double(values[2 * (bin + 1) + 1])
      defer { previousImaginary = nextImaginary }
      let imaginary = previousImaginary
      guard (imaginary <= 0) != (nextImaginary <= 0), values[2 * bin] > 0 else { continue }
      let fraction = imaginary / (imaginary - nextImaginary)
      let here = magnitude(values, bin)
      let next = magnitude(values, bin + 1)
      crossings.append(
        (here + fraction * (next - here), (Double(bin) + fraction) * binWidth))
    }
    guard let best = crossings.max(by: { $0.gain < $1.gain }), best.gain > 0 else { return nil }
    let within = crossings.filter { $0.gain >= best.gain * Decibels.amplitude(-3) }.count
    return LoopStability(
      maximumStableGain: -20 * log10(best.gain), frequency: best.frequency,
      crossingsWithin3dB: within)
  }

  private static func magnitude(_ values: UnsafeMutablePointer<Float>, _ bin: Int) -> Double {
    let re = Double(values[2 * bin])
    let im = Double(values[2 * bin + 1])
    return (re * re + im * im).squareRoot()
  }
}
