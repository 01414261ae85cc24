import Foundation
import SignalDSP

/// Spectral measurements of recorded signals (offline, any thread).
enum Measures {
  /// Welch power spectrum (Hann frames of `size`, half overlapping) of
  /// `samples[range]`, in dB per bin.
  static func powerSpectrum(_ samples: [Float], _ range: Range<Int>, size: Int = 4096) -> [Double] {
    let transform = RealFourierTransform(size: size)
    let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
    var sum = [Double](repeating: 0, count: transform.binCount)
    var frames = 0
    var start = range.lowerBound
    while start + size <= range.upperBound {
      for index in 0..<size {
        transform.real[index] = Float(Double(samples[start + index]) * window[index])
      }
      transform.forward()
      for bin in 0..<transform.binCount {
        let re = Double(transform.complex[2 * bin])
        let im = Double(transform.complex[2 * bin + 1])
        sum[bin] += re * re + im * im
      }
      frames += 1
      start += size / 2
    }
    return sum.map { 10 * log10($0 / Double(max(1, frames)) + 1e-30) }
  }

  /// The largest value of a spectrum between `low` and `high` Hz.
  static func peak(_ spectrum: [Double], from low: Double, to high: Double, size: Int = 4096)
    -> Double
  {
    let binWidth = Double(Evaluation.rate) / Double(size)
    return spectrum[Int(low / binWidth)...Int(high / binWidth)].max() ?? -.infinity
  }

  /// The level (dB) of the strongest of the three bins around `frequency`
  /// in Hann frames of `size` ending every `hop` samples; each value's time
  /// (s) is the end of its frame, or its centre when `centred`.
  static func track(
    _ samples: [Float], frequency: Double, size: Int = 2048, hop: Int = 256, centred: Bool = false
  ) -> [(time: Double, level: Double)] {
    let transform = RealFourierTransform(size: size)
    let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
    let bin = Int((frequency * Double(size) / Double(Evaluation.rate)).rounded())
    var out = [(time: Double, level: Double)]()
    var start = 0
    while start + size <= samples.count {
      for index in 0..<size {
        transform.real[index] = Float(Double(samples[start + index]) * window[index])
      }
      transform.forward()
      var best = 0.0
      for b in max(0, bin - 1)...min(transform.binCount - 1, bin + 1) {
        let re = Double(transform.complex[2 * b])
        let im = Double(transform.complex[2 * b + 1])
        best = max(best, re * re + im * im)
      }
      let stamp = centred ? start + size / 2 : start + size
      out.append((Double(stamp) / Double(Evaluation.rate), 10 * log10(best + 1e-30)))
      start += hop
    }
    return out
  }

  /// The frequency of the strongest bin of the last `size` samples between `low` and `high` Hz.
  static func strongestFrequency(_ samples: [Float], from low: Double, to high: Double) -> Double {
    let size = 8192
    let spectrum = powerSpectrum(samples, (samples.count - size)..<samples.count, size: size)
    let binWidth = Double(Evaluation.rate) / Double(size)
    let range = Int(low / binWidth)...Int(high / binWidth)
    let best = range.max { spectrum[$0] < spectrum[$1] }!
    return Double(best) * binWidth
  }

  /// Level in dB of a sine of `frequency` in `samples[range]` (Hann-windowed projection).
  static func sineLevel(_ samples: [Float], frequency: Double, _ range: Range<Int>) -> Double {
    var re = 0.0
    var im = 0.0
    var weight = 0.0
    let count = range.count
    for (index, sample) in samples[range].enumerated() {
      let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(index) / Double(count))
      let phase = 2 * Double.pi * frequency * Double(index) / Double(Evaluation.rate)
      re += Double(sample) * w * cos(phase)
      im += Double(sample) * w * sin(phase)
      weight += w
    }
    return 20 * log10(2 * (re * re + im * im).squareRoot() / weight + 1e-30)
  }

  /// The largest magnitude in `samples[range]`.
  static func peakSample(_ samples: [Float], _ range: Range<Int>) -> Float {
    samples[range].reduce(0) { max($0, abs($1)) }
  }
}

/// A reproducible stream of Gaussian noise (xorshift and Box–Muller).
struct NoiseSource {
  private var state: UInt64

  init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

  mutating func uniform() -> Double {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    return (Double(state >> 11) + 0.5) / Double(1 << 53)
  }

  mutating func gaussian() -> Double {
    (-2 * log(uniform())).squareRoot() * cos(2 * Double.pi * uniform())
  }

  /// `count` samples of white noise at `level` dBFS RMS.
  mutating func samples(_ count: Int, level: Double) -> [Float] {
    let scale = Decibels.amplitude(level)
    return (0..<count).map { _ in Float(gaussian() * scale) }
  }
}
