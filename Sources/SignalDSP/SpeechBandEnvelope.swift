/// The talk detector's view of one channel: the speech band (about
/// 200–4000 Hz) at about 8 kHz, followed by an envelope follower.
///
/// Block averaging down to 8–16 kHz, a 4th-order Butterworth high-pass at
/// 200 Hz and, when the reduced rate is above 9 kHz, a low-pass at 3.8 kHz
/// shed mains hum, rumble and most broadband hiss, while the meter keeps
/// reporting the full-band level. Built at configuration time; `process`
/// is real-time safe.
public final class SpeechBandEnvelope {
  /// Rate of the envelope samples this produces.
  public let envelopeRate: Double
  /// Input samples per envelope sample.
  public var decimationFactor: Int { decimator.factor }
  private var decimator: BoxcarDecimator
  private var highPass1: Biquad
  private var highPass2: Biquad
  private var lowPass: Biquad?
  /// The envelope follower on the band-limited signal.
  public private(set) var follower: EnvelopeFollower

  /// Lower and upper edges of the speech band in Hz.
  public static let bandEdges = (low: 200.0, high: 3_800.0)

  public init(sampleRate: Double, attackTime: Double, releaseTime: Double, maximumBlock: Int) {
    let factor = max(1, Int(sampleRate / 8_000))
    decimator = BoxcarDecimator(factor: factor)
    let rate = sampleRate / Double(factor)
    envelopeRate = rate
    let low = Self.bandEdges.low
    highPass1 = .highPass(frequency: low, q: 0.541_196_1, sampleRate: rate)
    highPass2 = .highPass(frequency: low, q: 1.306_563, sampleRate: rate)
    lowPass =
      rate > 9_000
      ? .lowPass(frequency: Self.bandEdges.high, q: 0.707_106_8, sampleRate: rate) : nil
    follower = EnvelopeFollower(attackTime: attackTime, releaseTime: releaseTime, sampleRate: rate)
  }

  /// The most envelope samples one call can produce for `inputCount` samples.
  public func maximumOutputCount(forInput inputCount: Int) -> Int {
    decimator.maximumOutputCount(forInput: inputCount)
  }

  /// Turns a block of one channel into envelope samples written to
  /// `output`, and, when given, the band-limited signal's power (its square)
  /// sample by sample into `power`.
  /// - Returns: the number of envelope samples written.
  public func process(
    _ input: UnsafeBufferPointer<Float>, into output: UnsafeMutablePointer<Float>,
    power: UnsafeMutablePointer<Float>? = nil
  ) -> Int {
    let count = decimator.process(input, into: output)
    var h1 = highPass1
    var h2 = highPass2
    var env = follower
    if var lp = lowPass {
      if let power {
        for index in 0..<count {
          let band = lp.process(h2.process(h1.process(output[index])))
          power[index] = band * band
          output[index] = env.process(band)
        }
      } else {
        for index in 0..<count {
          output[index] = env.process(lp.process(h2.process(h1.process(output[index]))))
        }
      }
      lowPass = lp
    } else if let power {
      for index in 0..<count {
        let band = h2.process(h1.process(output[index]))
        power[index] = band * band
        output[index] = env.process(band)
      }
    } else {
      for index in 0..<count {
        output[index] = env.process(h2.process(h1.process(output[index])))
      }
    }
    highPass1 = h1
    highPass2 = h2
    follower = env
    return count
  }
}
