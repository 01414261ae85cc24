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
  private var highPass1: FourStepBiquad
  private var highPass2: FourStepBiquad
  private var lowPass: FourStepBiquad?

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
    highPass1 = FourStepBiquad(
      .highPass(frequency: low, q: Butterworth.fourthOrderQ.0, sampleRate: rate))
    highPass2 = FourStepBiquad(
      .highPass(frequency: low, q: Butterworth.fourthOrderQ.1, sampleRate: rate))
    lowPass =
      rate > 9_000
      ? FourStepBiquad(
        .lowPass(frequency: Self.bandEdges.high, q: Butterworth.secondOrderQ, sampleRate: rate))
      : nil
  }

  /// Filters `count` samples in place.
  public mutating func process(_ samples: UnsafeMutablePointer<Float>, count: Int) {
    highPass1.process(samples, count: count)
    highPass2.process(samples, count: count)
    lowPass?.process(samples, count: count)
  }

  /// Filters `count` samples of two channels in place, each with its own
  /// state: the same bits as `process` on each, the two channels' sections
  /// run side by side (`FourStepBiquad.processPair`).
  public static func process(
    _ first: inout SpeechBandFilter, _ firstSamples: UnsafeMutablePointer<Float>,
    _ second: inout SpeechBandFilter, _ secondSamples: UnsafeMutablePointer<Float>, count: Int
  ) {
    FourStepBiquad.processPair(
      &first.highPass1, firstSamples, &second.highPass1, secondSamples, count: count)
    FourStepBiquad.processPair(
      &first.highPass2, firstSamples, &second.highPass2, secondSamples, count: count)
    if first.lowPass != nil && second.lowPass != nil {
      FourStepBiquad.processPair(
        &first.lowPass!, firstSamples, &second.lowPass!, secondSamples, count: count)
    } else {
      first.lowPass?.process(firstSamples, count: count)
      second.lowPass?.process(secondSamples, count: count)
    }
  }
}
