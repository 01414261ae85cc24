import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct SpectrumAnalyzerTests {
  func analyze(_ signal: [Float], rate: Double) -> SpectrumAnalyzer {
    let analyzer = SpectrumAnalyzer(frameLength: signal.count, sampleRate: rate)
    signal.withUnsafeBufferPointer {
      analyzer.analyze($0, UnsafeBufferPointer(start: nil, count: 0))
    }
    return analyzer
  }

  @Test func peakFrequencyIsWithinATenthOfABinAndLevelWithinATenthOfADecibel() {
    let rate = 8_000.0
    for frequency in stride(from: 500.0, through: 3_000, by: 37.3) {
      let signal = (0..<160).map { Float(0.25 * sin(2 * .pi * frequency * Double($0) / rate + 1)) }
      let analyzer = analyze(signal, rate: rate)
      let peak = analyzer.peak(from: 300, to: 3_400)!
      #expect(abs(peak.frequency - frequency) < 0.1 * analyzer.binWidth, "\(frequency) Hz: \(peak)")
      #expect(abs(20 * log10(peak.amplitude) - 20 * log10(0.25)) < 0.1, "\(frequency) Hz: \(peak)")
    }
  }

  /// Mean noise power per bin estimated over 50 frames of white noise plus
  /// a tone of `toneAmplitude`, relative to the truth.
  func noiseEstimateRatio(rate: Double, length: Int, toneAmplitude: Double) -> Double {
    var random = SplitMix(seed: 5)
    let sigma = 0.05
    var total = 0.0
    for _ in 0..<50 {
      let signal = (0..<length).map { n -> Float in
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let u2 = Double.random(in: 0..<1, using: &random)
        let noise = sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        return Float(noise + toneAmplitude * sin(2 * .pi * 1_000 * Double(n) / rate))
      }
      let analyzer = analyze(signal, rate: rate)
      let bins = Double(analyzer.bin(of: 3_400) - analyzer.bin(of: 300) + 1)
      total += analyzer.noisePower(from: 300, to: 3_400) / bins
    }
    // A bin of white noise under a Hann window holds σ² × Σw² = σ² × 0.375 N.
    return total / 50 / (sigma * sigma * Double(length) * 0.375)
  }

  @Test func noisePowerMatchesWhiteNoise() {
    let ratio = noiseEstimateRatio(rate: 48_000, length: 960, toneAmplitude: 0)
    #expect(abs(ratio - 1) < 0.1, "\(ratio)")
  }

  @Test func noisePowerBarelyMovesWithATone() {
    // A tone 10 dB above the noise lifts only the bins of its main lobe and
    // first sidelobes, all above the 30th percentile.
    let ratio = noiseEstimateRatio(rate: 8_000, length: 160, toneAmplitude: 0.05 * 20.squareRoot())
    #expect(abs(ratio - 1) < 0.15, "\(ratio)")
  }

  @Test func friendlyLengthsHaveOnlySmallPrimeFactors() {
    #expect(SpectrumAnalyzer.friendlyLength(near: 160) == 160)
    #expect(SpectrumAnalyzer.friendlyLength(near: 881) == 882)
    #expect(SpectrumAnalyzer.friendlyLength(near: 1_021) == 1_024)
  }
}
