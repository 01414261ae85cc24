import SignalDSP
import TestSupport
import Testing

@testable import Metering

/// The speech-band filter's block biquad against the direct form.
@Suite struct FourStepBiquadTests {
  /// Every output within a hair of the direct form's, for block sizes that
  /// leave every remainder (and single samples) between calls.
  @Test(arguments: [1, 2, 3, 5, 7, 11, 64, 800, 801])
  func fourStepBiquadMatchesTheDirectForm(block: Int) {
    var random = SplitMix(seed: UInt64(block))
    let input = (0..<6000).map { _ in Float.random(in: -1...1, using: &random) }
    for section in [
      Biquad.highPass(frequency: 200, q: Butterworth.fourthOrderQ.1, sampleRate: 8000),
      Biquad.lowPass(frequency: 3800, q: Butterworth.secondOrderQ, sampleRate: 12_000),
    ] {
      var direct = section
      let expected = input.map { direct.process($0) }
      var blocked = FourStepBiquad(section)
      var output = input
      output.withUnsafeMutableBufferPointer { buffer in
        var start = 0
        while start < buffer.count {
          let count = min(block, buffer.count - start)
          blocked.process(buffer.baseAddress! + start, count: count)
          start += count
        }
      }
      let worst = zip(output, expected).map { abs($0 - $1) }.max()!
      #expect(worst < 1e-5, "largest difference \(worst)")
    }
  }
}
