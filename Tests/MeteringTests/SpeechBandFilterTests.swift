import Metering
import TestSupport
import Testing

/// The talk detector's speech-band filter.
@Suite struct SpeechBandFilterTests {
  /// Two channels filtered side by side equal each filtered alone, bit for
  /// bit: at 8 kHz (two high-pass sections) and at 12 kHz (the low-pass too).
  @Test(arguments: [8000.0, 12_000])
  func speechBandPairEqualsEachChannelAlone(rate: Double) {
    var random = SplitMix(seed: 3)
    let first = (0..<4000).map { _ in Float.random(in: -1...1, using: &random) }
    let second = (0..<4000).map { _ in Float.random(in: -1...1, using: &random) }
    var aloneFirst = first
    var aloneSecond = second
    var filterA = SpeechBandFilter(rate: rate)
    var filterB = SpeechBandFilter(rate: rate)
    filterA.process(&aloneFirst, count: 4000)
    filterB.process(&aloneSecond, count: 4000)
    var pairFirst = first
    var pairSecond = second
    var pairA = SpeechBandFilter(rate: rate)
    var pairB = SpeechBandFilter(rate: rate)
    // Several calls, cutting groups of four, so the state carried between
    // blocks (an open group among it) is checked too.
    for range in [0..<1501, 1501..<1503, 1503..<1504, 1504..<2999, 2999..<4000] {
      pairFirst.withUnsafeMutableBufferPointer { a in
        pairSecond.withUnsafeMutableBufferPointer { b in
          SpeechBandFilter.process(
            &pairA, a.baseAddress! + range.lowerBound, &pairB, b.baseAddress! + range.lowerBound,
            count: range.count)
        }
      }
    }
    #expect(pairFirst == aloneFirst)
    #expect(pairSecond == aloneSecond)
  }
}
