import SignalDSP
import TestSupport
import Testing

@testable import Metering

/// The speech-band filter's block biquad against the direct form.
@Suite struct FourStepBiquadTests {
  /// Every output within a hair of the direct form's, for block sizes that
  /// leave every remainder (and single samples) between calls (the outputs
  /// are the same for any cut: see `blockSizeDoesNotChangeAnOutput`).
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
      // Both forms round; near the high-pass's poles the two drift apart by up to about 1.4e-5.
      #expect(worst < 2e-5, "largest difference \(worst)")
    }
  }

  /// The same bits for any cut into blocks: the groups of four run on
  /// across calls.
  @Test(arguments: [1, 2, 3, 5, 7, 11, 64, 801])
  func blockSizeDoesNotChangeAnOutput(block: Int) {
    var random = SplitMix(seed: 99)
    let input = (0..<3000).map { _ in Float.random(in: -1...1, using: &random) }
    let section = Biquad.highPass(frequency: 200, q: Butterworth.fourthOrderQ.0, sampleRate: 8000)
    func filtered(inBlocksOf size: Int) -> [Float] {
      var filter = FourStepBiquad(section)
      var output = input
      output.withUnsafeMutableBufferPointer { buffer in
        var start = 0
        while start < buffer.count {
          let count = min(size, buffer.count - start)
          filter.process(buffer.baseAddress! + start, count: count)
          start += count
        }
      }
      return output
    }
    #expect(filtered(inBlocksOf: block) == filtered(inBlocksOf: input.count))
  }
}
