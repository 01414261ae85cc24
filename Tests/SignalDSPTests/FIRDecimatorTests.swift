import Foundation
import SignalDSP
import TestSupport
import Testing

/// The decimator in front of tone analysis: the pass band unchanged, what
/// would fold into it gone, any block size alike.
@Suite struct FIRDecimatorTests {
  static func sine(_ frequency: Double, rate: Double, seconds: Double) -> [Float] {
    (0..<Int(seconds * rate)).map { Float(0.5 * sin(2 * .pi * frequency * Double($0) / rate)) }
  }

  /// Decimates in blocks of varying size.
  static func decimate(_ input: [Float], _ decimator: inout FIRDecimator) -> [Float] {
    var output = [Float]()
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 5_000)
    defer { scratch.deallocate() }
    var offset = 0
    var block = 1
    input.withUnsafeBufferPointer { all in
      while offset < all.count {
        let count = min(block, all.count - offset)
        let produced = decimator.process(
          UnsafeBufferPointer(rebasing: all[offset..<offset + count]), into: scratch)
        output += UnsafeBufferPointer(start: scratch, count: produced)
        offset += count
        block = block * 3 % 4_001 + 1
      }
    }
    return output
  }

  /// Peak amplitude of the second half (past the filter's start).
  static func amplitude(_ samples: [Float]) -> Double {
    Double(samples[(samples.count / 2)...].map(abs).max() ?? 0)
  }

  @Test(arguments: [(48_000.0, 5), (44_100, 5), (22_050, 2)])
  func thePassBandKeepsItsLevelAndTheRestIsGone(rate: Double, factor: Int) {
    for frequency in [697.0, 1_633, 3_000] {
      var decimator = FIRDecimator(factor: factor, sampleRate: rate, passBand: 3_400)
      let output = Self.decimate(Self.sine(frequency, rate: rate, seconds: 1), &decimator)
      #expect(abs(output.count - Int(rate) / factor) <= 1)
      let gain = 20 * log10(Self.amplitude(output) / 0.5)
      #expect(abs(gain) < 0.05, "\(frequency) Hz at \(Int(rate)): \(gain) dB")
    }
    // What folds into the band is 60 dB down.
    let folding = rate / Double(factor) - 3_000
    var decimator = FIRDecimator(factor: factor, sampleRate: rate, passBand: 3_400)
    let output = Self.decimate(Self.sine(folding, rate: rate, seconds: 1), &decimator)
    #expect(20 * log10(Self.amplitude(output) / 0.5) < -58, "\(folding) Hz")
  }

  /// The processor's wide vectors, where it has them, give the portable
  /// sums bit for bit, for every factor the decoder uses.
  @Test(arguments: [(48_000.0, 5), (44_100, 5), (22_050, 2), (96_000, 10), (16_000, 1)])
  func wideVectorsSumExactlyAsThePortableCode(rate: Double, factor: Int) {
    var random = SplitMix(seed: 4)
    let input = (0..<30_000).map { _ in Float.random(in: -1...1, using: &random) }
    var wide = FIRDecimator(factor: factor, sampleRate: rate, passBand: 3_400)
    var portable = FIRDecimator(
      factor: factor, sampleRate: rate, passBand: 3_400, allowsWideVectors: false)
    let expected = Self.decimate(input, &portable)
    let output = Self.decimate(input, &wide)
    #expect(output.count == expected.count)
    #expect(zip(output, expected).allSatisfy { $0.bitPattern == $1.bitPattern })
  }

  /// Output sample n stands for input time n / outputRate − delay.
  @Test func theDelayIsWhatItSays() {
    let rate = 48_000.0
    var decimator = FIRDecimator(factor: 6, sampleRate: rate, passBand: 3_000)
    var input = [Float](repeating: 0, count: 9_600)
    input[4_800] = 1
    let output = Self.decimate(input, &decimator)
    let peak = output.indices.max { output[$0] < output[$1] }!
    let time = Double(peak) / decimator.outputRate - decimator.delay
    #expect(abs(time - 0.1) <= 0.5 / decimator.outputRate, "\(time)")
  }

  /// A decimator that skips chunks (`skip`) and another restored to where
  /// it stood before each (`save`, `restore`) make exactly the outputs one
  /// decimator makes of the whole stream, in any chunk sizes.
  @Test func chunksLeftToAnotherFilterComeOutTheSame() {
    var random = SplitMix(seed: 9)
    let input = (0..<20_000).map { _ in Float.random(in: -1...1, using: &random) }
    var whole = FIRDecimator(factor: 5, sampleRate: 48_000, passBand: 3_400)
    let expected = Self.decimate(input, &whole)
    var streaming = FIRDecimator(factor: 5, sampleRate: 48_000, passBand: 3_400)
    var elsewhere = streaming
    let state = UnsafeMutablePointer<Float>.allocate(capacity: streaming.stateSize)
    let output = UnsafeMutablePointer<Float>.allocate(capacity: 5_000)
    defer {
      state.deallocate()
      output.deallocate()
    }
    var result = [Float]()
    var offset = 0
    var size = 7
    var chunk = 0
    input.withUnsafeBufferPointer { all in
      while offset < all.count {
        let count = min(size, all.count - offset)
        let piece = UnsafeBufferPointer(rebasing: all[offset..<offset + count])
        if chunk % 3 == 1 {
          let expectedCount = streaming.outputCount(forNext: count)
          let (held, phase) = streaming.save(into: state)
          let skipped = streaming.skip(piece)
          elsewhere.restore(state, held: held, phase: phase)
          let produced = elsewhere.process(piece, into: output)
          #expect(produced == skipped && produced == expectedCount)
          result += UnsafeBufferPointer(start: output, count: produced)
        } else {
          let produced = streaming.process(piece, into: output)
          result += UnsafeBufferPointer(start: output, count: produced)
        }
        offset += count
        chunk += 1
        size = size * 7 % 3_001 + 1
      }
    }
    #expect(result == expected)
  }
}
