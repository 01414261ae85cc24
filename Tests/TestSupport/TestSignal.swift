import Foundation

/// Builds test signals: tone bursts with chosen frequencies, levels and
/// timing, plus reproducible white noise at a chosen SNR.
public struct TestSignal {
  public let sampleRate: Double
  public var samples: [Float] = []
  private var random: SplitMix

  public init(sampleRate: Double, seed: UInt64 = 7) {
    self.sampleRate = sampleRate
    random = SplitMix(seed: seed)
  }

  /// Appends `duration` seconds of the sum of sines (amplitudes are peak, 1 = full scale).
  public mutating func tone(_ frequencies: [Double], amplitudes: [Double], duration: Double) {
    let count = Int((duration * sampleRate).rounded())
    let phase = Double.random(in: 0..<(2 * .pi), using: &random)
    for n in 0..<count {
      var value = 0.0
      for (index, frequency) in frequencies.enumerated() {
        value += amplitudes[index] * sin(2 * .pi * frequency * Double(n) / sampleRate + phase)
      }
      samples.append(Float(value))
    }
  }

  public mutating func append(_ other: TestSignal) { samples.append(contentsOf: other.samples) }

  public mutating func silence(_ duration: Double) {
    samples.append(contentsOf: repeatElement(0, count: Int((duration * sampleRate).rounded())))
  }

  /// Adds white Gaussian noise whose power is `snr` dB below that of a sine of `amplitude`.
  public mutating func addNoise(snr: Double, relativeTo amplitude: Double) {
    let sigma = (amplitude * amplitude / 2 / pow(10, snr / 10)).squareRoot()
    for index in samples.indices {
      let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
      let u2 = Double.random(in: 0..<1, using: &random)
      samples[index] += Float(sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
    }
  }
}
