import SignalDSP

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

  /// Filters `count` samples of two channels in place, each with its own
  /// state, as one two-lane recursion: the same arithmetic as `process`
  /// per channel, for both channels in the time of one.
  @inline(never)
  public static func process(
    _ first: inout SpeechBandFilter, _ firstSamples: UnsafeMutablePointer<Float>,
    _ second: inout SpeechBandFilter, _ secondSamples: UnsafeMutablePointer<Float>, count: Int
  ) {
    guard first.lowPass == nil && second.lowPass == nil && first.rate == second.rate else {
      first.process(firstSamples, count: count)
      second.process(secondSamples, count: count)
      return
    }
    var stage1 = BiquadPair(first.highPass1, second.highPass1)
    var stage2 = BiquadPair(first.highPass2, second.highPass2)
    for index in 0..<count {
      let y = stage2.process(stage1.process(SIMD2(firstSamples[index], secondSamples[index])))
      firstSamples[index] = y[0]
      secondSamples[index] = y[1]
    }
    stage1.store(into: &first.highPass1, &second.highPass1)
    stage2.store(into: &first.highPass2, &second.highPass2)
  }
}

/// Two biquads with the same coefficients run as one in two SIMD lanes.
private struct BiquadPair {
  let b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
  var x1: SIMD2<Float>, x2: SIMD2<Float>, y1: SIMD2<Float>, y2: SIMD2<Float>

  init(_ first: Biquad, _ second: Biquad) {
    b0 = first.b0
    b1 = first.b1
    b2 = first.b2
    a1 = first.a1
    a2 = first.a2
    x1 = SIMD2(first.x1, second.x1)
    x2 = SIMD2(first.x2, second.x2)
    y1 = SIMD2(first.y1, second.y1)
    y2 = SIMD2(first.y2, second.y2)
  }

  @inline(__always)
  mutating func process(_ x: SIMD2<Float>) -> SIMD2<Float> {
    let independent = (b0 * x + b1 * x1 + b2 * x2) - a2 * y2
    let y = independent - a1 * y1
    x2 = x1
    x1 = x
    y2 = y1
    y1 = y
    return y
  }

  func store(into first: inout Biquad, _ second: inout Biquad) {
    first.x1 = x1[0]
    first.x2 = x2[0]
    first.y1 = y1[0]
    first.y2 = y2[0]
    second.x1 = x1[1]
    second.x2 = x2[1]
    second.y1 = y1[1]
    second.y2 = y2[1]
  }
}
