import Metering
import TestSupport
import Testing

/// The talk detector's speech-band filter.
@Suite struct SpeechBandFilterTests {
  /// Two channels filtered as one two-lane recursion equal each filtered alone.
  @Test func speechBandPairEqualsEachChannelAlone() {
    var random = SplitMix(seed: 3)
    let first = (0..<4000).map { _ in Float.random(in: -1...1, using: &random) }
    let second = (0..<4000).map { _ in Float.random(in: -1...1, using: &random) }
    var aloneFirst = first
    var aloneSecond = second
    var filterA = SpeechBandFilter(rate: 8000)
    var filterB = SpeechBandFilter(rate: 8000)
    filterA.process(&aloneFirst, count: 4000)
    filterB.process(&aloneSecond, count: 4000)
    var pairFirst = first
    var pairSecond = second
    var pairA = SpeechBandFilter(rate: 8000)
    var pairB = SpeechBandFilter(rate: 8000)
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
