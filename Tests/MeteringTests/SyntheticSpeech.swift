import Foundation
import SignalDSP
import TestSupport

/// Speech-like test signals: voiced syllables (a harmonic tone on a
/// gliding pitch, 170–240 Hz, with falling harmonics) of 120–260 ms under
/// a raised-cosine envelope, 3–8 dB apart in level, joined into words by
/// 30–60 ms dips 20 dB down, words separated by 60–140 ms of silence — so
/// the level comes and goes by 20 dB and more several times a second, as a
/// voice reading aloud does, with no pause longer than a word gap.
struct SyntheticSpeech {
  let sampleRate: Double
  private var random: SplitMix

  init(sampleRate: Double, seed: UInt64) {
    self.sampleRate = sampleRate
    random = SplitMix(seed: seed)
  }

  /// `seconds` of continuous reading whose RMS over the whole stretch is
  /// `level` dBFS.
  mutating func reading(seconds: Double, level: Double) -> [Float] {
    let total = Int(seconds * sampleRate)
    var samples = [Float]()
    samples.reserveCapacity(total)
    while samples.count < total {
      let syllables = Int.random(in: 1...3, using: &random)
      for index in 0..<syllables {
        if index > 0 { samples += dip(Double.random(in: 0.03...0.06, using: &random)) }
        samples += syllable()
      }
      samples += [Float](
        repeating: 0, count: Int(Double.random(in: 0.06...0.14, using: &random) * sampleRate))
    }
    samples.removeLast(samples.count - total)
    let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(total)).squareRoot()
    let gain = Float(Decibels.amplitude(level) / rms)
    return samples.map { $0 * gain }
  }

  /// One voiced syllable at a random pitch and level (peak about 1).
  private mutating func syllable() -> [Float] {
    let count = Int(Double.random(in: 0.12...0.26, using: &random) * sampleRate)
    let pitch = Double.random(in: 170...240, using: &random)
    let glide = Double.random(in: -0.15...0.15, using: &random)
    let gain = Decibels.amplitude(-Double.random(in: 0...8, using: &random))
    var phase = 0.0
    return (0..<count).map { n in
      let progress = Double(n) / Double(count)
      phase += 2 * .pi * pitch * (1 + glide * progress) / sampleRate
      var value = 0.0
      for harmonic in 1...12 { value += sin(Double(harmonic) * phase) / Double(harmonic) }
      let envelope = sin(.pi * progress) * sin(.pi * progress)
      return Float(gain * envelope * value / 2)
    }
  }

  /// A weak stretch between syllables: noise 20 dB under a syllable.
  private mutating func dip(_ seconds: Double) -> [Float] {
    (0..<Int(seconds * sampleRate)).map { _ in Float.random(in: -0.1...0.1, using: &random) }
  }
}
