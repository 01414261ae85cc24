/// The talk detector's view of one channel: the speech band (about
/// 200–4000 Hz) of a signal already reduced to about 8 kHz (see
/// `reductionFactor(forSampleRate:)`), followed by an envelope follower.
///
/// A 4th-order Butterworth high-pass at 200 Hz and, when the reduced rate
/// is above 9 kHz, a low-pass at 3.8 kHz shed mains hum, rumble and most
/// broadband hiss, while the meter keeps reporting the full-band level.
/// Built at configuration time; `process` is real-time safe.
public final class SpeechBandEnvelope {
  /// Rate of the samples this takes and of the envelope it produces.
  public let envelopeRate: Double
  private var highPass1: Biquad
  private var highPass2: Biquad
  private var lowPass: Biquad?
  /// The envelope follower on the band-limited signal.
  public private(set) var follower: EnvelopeFollower

  /// Lower and upper edges of the speech band in Hz.
  public static let bandEdges = (low: 200.0, high: 3_800.0)

  /// Input samples per envelope sample: block averaging brings any rate
  /// down to 8–16 kHz (see `BoxcarDecimator`).
  public static func reductionFactor(forSampleRate sampleRate: Double) -> Int {
    max(1, Int(sampleRate / 8_000))
  }

  /// - Parameter envelopeRate: the rate of the reduced signal.
  public init(envelopeRate rate: Double, attackTime: Double, releaseTime: Double) {
    envelopeRate = rate
    let low = Self.bandEdges.low
    highPass1 = .highPass(frequency: low, q: 0.541_196_1, sampleRate: rate)
    highPass2 = .highPass(frequency: low, q: 1.306_563, sampleRate: rate)
    lowPass =
      rate > 9_000
      ? .lowPass(frequency: Self.bandEdges.high, q: 0.707_106_8, sampleRate: rate) : nil
    follower = EnvelopeFollower(attackTime: attackTime, releaseTime: releaseTime, sampleRate: rate)
  }

  /// Replaces `count` reduced samples in `samples` by their envelope and
  /// writes the band-limited signal's power (its square) sample by sample
  /// into `power`.
  public func process(
    _ samples: UnsafeMutablePointer<Float>, count: Int, power: UnsafeMutablePointer<Float>
  ) {
    var h1 = highPass1
    var h2 = highPass2
    var env = follower
    if var lp = lowPass {
      for index in 0..<count {
        let band = lp.process(h2.process(h1.process(samples[index])))
        power[index] = band * band
        samples[index] = env.process(band)
      }
      lowPass = lp
    } else {
      for index in 0..<count {
        let band = h2.process(h1.process(samples[index]))
        power[index] = band * band
        samples[index] = env.process(band)
      }
    }
    highPass1 = h1
    highPass2 = h2
    follower = env
  }
}
