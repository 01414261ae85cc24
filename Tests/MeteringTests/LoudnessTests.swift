import CVectorKernels
import Foundation
import TestSupport
import Testing

@testable import Metering

/// The parts of the loudness meter, on short signals synthesized here (the
/// EBU Tech 3341 and 3342 cases and the comparison with libebur128 run on
/// the release build in `LoudnessCommandTests`).
@Suite struct LoudnessTests {
  /// Feeds a programme of 1 kHz sine segments (seconds, dBFS per channel)
  /// to a meter in uneven blocks and returns it.
  func measure(
    _ segments: [(seconds: Double, levels: [Double])], rate: Double = 48_000,
    frequency: Double = 1_000, phase: Double = 0
  ) -> LoudnessMeter {
    let channels = segments[0].levels.count
    let meter = LoudnessMeter(sampleRate: rate, channelCount: channels)
    var block = [Float](repeating: 0, count: 4_096 * channels)
    var n = 0
    var blockSizes = [4_096, 1, 333, 2_048, 17]
    for segment in segments {
      let amplitudes = segment.levels.map { pow(10, $0 / 20) }
      var left = Int((segment.seconds * rate).rounded())
      while left > 0 {
        let size = min(left, blockSizes[0])
        blockSizes.append(blockSizes.removeFirst())
        for frame in 0..<size {
          let value = sin(2 * Double.pi * frequency * Double(n + frame) / rate + phase)
          for channel in 0..<channels {
            block[frame * channels + channel] = Float(amplitudes[channel] * value)
          }
        }
        block.withUnsafeBufferPointer { meter.process($0.baseAddress!, frameCount: size) }
        n += size
        left -= size
      }
    }
    return meter
  }

  @Test func kWeightingHasTheStandardsCoefficientsAt48kHz() {
    let filter = KWeighting(sampleRate: 48_000)
    #expect(abs(filter.shelf.b0 - 1.535_124_859_586_97) < 1e-9)
    #expect(abs(filter.shelf.b1 - -2.691_696_189_406_38) < 1e-9)
    #expect(abs(filter.shelf.b2 - 1.198_392_810_852_85) < 1e-9)
    #expect(abs(filter.shelf.a1 - -1.690_659_293_182_41) < 1e-9)
    #expect(abs(filter.shelf.a2 - 0.732_480_774_215_85) < 1e-9)
    #expect(abs(filter.highPass.a1 - -1.990_047_454_833_98) < 1e-9)
    #expect(abs(filter.highPass.a2 - 0.990_072_250_366_21) < 1e-9)
  }

  /// Momentary and short-term of a steady tone equal its loudness once
  /// their windows are full, and are unknown before.
  @Test func momentaryAndShortTermFillTheirWindows() {
    let early = measure([(0.35, [-23, -23])])
    #expect(early.momentaryLUFS == nil)
    let meter = measure([(3.05, [-23, -23])])
    #expect(abs((meter.momentaryLUFS ?? 0) - -23) <= 0.1)
    #expect(abs((meter.shortTermLUFS ?? 0) - -23) <= 0.1)
    #expect(abs((meter.summary(truePeakDBTP: nil).shortTermMaxLUFS ?? 0) - -23) <= 0.1)
    let silent = measure([(1, [-200, -200])])
    #expect(silent.summary(truePeakDBTP: nil).integratedLUFS == nil)
  }

  /// True peak: sines near a quarter of the rate, whose samples miss the
  /// crests by up to 3 dB, read within +0.2/−0.4 dB of the crest.
  @Test(arguments: [(12_000.0, Double.pi / 4), (11_990.0, 0.3), (12_000.0, 0.1), (9_600.0, 1.0)])
  func truePeakFindsTheCrestBetweenSamples(frequency: Double, phase: Double) {
    let amplitude = pow(10, -6.0 / 20)
    let samples = (0..<12_000).map {
      Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / 48_000 + phase))
    }
    let meter = TruePeakMeter(sampleRate: 48_000, maximumBlock: 1_000)
    samples.withUnsafeBufferPointer { buffer in
      for start in stride(from: 0, to: samples.count, by: 1_000) {
        meter.process(buffer.baseAddress! + start, count: 1_000, stride: 1)
      }
    }
    let truePeak = 20 * log10(Double(meter.peak))
    #expect(truePeak - -6 <= 0.2 && truePeak - -6 >= -0.4, "\(truePeak) dBTP")
  }

  /// The scan that lets the true-peak meter pass over quiet runs finds the
  /// largest magnitude wherever it lies, of either sign, for every length
  /// (whole vectors and the samples after them), and passes over NaN.
  @Test func theQuietRunScanFindsTheLargestMagnitudeAnywhere() {
    var random = SplitMix(seed: 5)
    for count in 0...40 {
      var values = (0..<count).map { _ in Float.random(in: -0.5...0.5, using: &random) }
      let plain = values.map { abs($0) }.max() ?? 0
      #expect(vk_largest_magnitude(values, count) == plain)
      for position in 0..<count {
        var loud = values
        loud[position] = position % 2 == 0 ? 0.9 : -0.9
        #expect(vk_largest_magnitude(loud, count) == 0.9, "count \(count), at \(position)")
      }
      if count > 0 {
        values[count / 2] = .nan
        let rest = values.filter { !$0.isNaN }.map { abs($0) }.max() ?? 0
        #expect(vk_largest_magnitude(values, count) == rest)
      }
    }
  }

  /// Below the lowest rate the K-weighting is unstable (its shelf lies
  /// above the band under 3,364 Hz) or far from the standard's curve: full
  /// scale noise and a tone, for seconds, are taken without a trap, and no
  /// loudness is claimed. Before, a block's energy ran to infinity and
  /// trapped converting it to a histogram bin.
  @Test(arguments: [1.0, 100, 1_000, 2_000, 3_000, 4_000, 7_999])
  func belowTheLowestRateNothingIsMeasuredAndNothingTraps(rate: Double) {
    let frames = max(64, Int(rate * 4))
    var state: UInt32 = 1
    let samples = (0..<(2 * frames)).map { index -> Float in
      state = state &* 1_664_525 &+ 1_013_904_223
      let noise = Float(Int32(bitPattern: state)) / Float(Int32.max)
      return index % 2 == 0 ? noise : Float(sin(Double(index) * 0.3))
    }
    let meter = LoudnessMeter(sampleRate: rate, channelCount: 2)
    samples.withUnsafeBufferPointer { meter.process($0.baseAddress!, frameCount: frames) }
    #expect(!LoudnessMeter.measures(sampleRate: rate))
    #expect(meter.momentaryLUFS == nil)
    #expect(meter.shortTermLUFS == nil)
    let summary = meter.summary(truePeakDBTP: nil)
    #expect(summary.integratedLUFS == nil && summary.momentaryMaxLUFS == nil)
  }

  /// At the lowest rate, telephone audio's, the weighting is close to the
  /// standard's: a 1 kHz tone reads within 0.3 LU of what it reads at 48 kHz.
  @Test func atTheLowestRateATonesLoudnessIsTheStandards() {
    let rate = LoudnessMeter.lowestSampleRate
    let meter = measure([(3.05, [-23, -23])], rate: rate)
    let reference = measure([(3.05, [-23, -23])])
    let low = meter.summary(truePeakDBTP: nil).integratedLUFS ?? 0
    let high = reference.summary(truePeakDBTP: nil).integratedLUFS ?? 0
    #expect(abs(low - high) <= 0.3, "\(low) LUFS at \(rate) Hz, \(high) at 48 kHz")
    #expect(abs(high - -23) <= 0.1)
  }

  /// A block of no finite energy is no measurement: it is left out of
  /// the histogram instead of trapping on its way to a bin.
  @Test func theHistogramLeavesOutBlocksOfNoFiniteEnergy() {
    var histogram = LoudnessHistogram()
    histogram.add(.infinity)
    histogram.add(.nan)
    histogram.add(.greatestFiniteMagnitude)
    histogram.add(LoudnessHistogram.energy(-23))
    #expect(histogram.total == 2)
    let (mean, count) = histogram.mean(atLeast: .infinity)
    #expect(count == 0 && mean == 0)
    #expect(histogram.gatedLoudness(relativeGate: -10) != nil)
  }

  @Test func channelWeightsFollowTheLayout() {
    #expect(LoudnessMeter.weights(channelCount: 1) == [1])
    #expect(LoudnessMeter.weights(channelCount: 6) == [1, 1, 1, 0, 1.41, 1.41])
    #expect(LoudnessMeter.weights(channelCount: 5) == [1, 1, 1, 1.41, 1.41])
  }
}
