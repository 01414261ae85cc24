import Foundation
import SignalDSP
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
}
