/// The speech band (about 200–3800 Hz) of one channel already reduced to
/// about 8 kHz (see `reductionFactor(forSampleRate:)`): what the talk
/// detector listens to.
///
/// A 4th-order Butterworth high-pass at 200 Hz and, when the reduced rate
/// is above 9 kHz, a low-pass at 3.8 kHz shed mains hum, rumble and most
/// broadband hiss, while the meter keeps reporting the full-band level.
/// Built at configuration time; `process` is real-time safe.
public struct SpeechBandFilter: Sendable {
  /// Rate of the samples this filters.
  public let rate: Double
  private var highPass1: Biquad
  private var highPass2: Biquad
  private var lowPass: Biquad?

  /// Lower and upper edges of the speech band in Hz.
  public static let bandEdges = (low: 200.0, high: 3_800.0)

  /// Input samples per reduced sample: block averaging brings any rate
  /// down to 8–16 kHz (see `BoxcarDecimator`).
  public static func reductionFactor(forSampleRate sampleRate: Double) -> Int {
    max(1, Int(sampleRate / 8_000))
  }

  /// - Parameter rate: the rate of the reduced signal.
  public init(rate: Double) {
    self.rate = rate
    let low = Self.bandEdges.low
    highPass1 = .highPass(frequency: low, q: 0.541_196_1, sampleRate: rate)
    highPass2 = .highPass(frequency: low, q: 1.306_563, sampleRate: rate)
    lowPass =
      rate > 9_000
      ? .lowPass(frequency: Self.bandEdges.high, q: 0.707_106_8, sampleRate: rate) : nil
  }

  /// Filters `count` samples in place.
  public mutating func process(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    var h1 = highPass1
    var h2 = highPass2
    if var lp = lowPass {
      for index in 0..<count { samples[index] = lp.process(h2.process(h1.process(samples[index]))) }
      lowPass = lp
    } else {
      for index in 0..<count { samples[index] = h2.process(h1.process(samples[index])) }
    }
    highPass1 = h1
    highPass2 = h2
  }
}
