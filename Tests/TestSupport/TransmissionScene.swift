import AudioFiles
import Foundation

/// Synthesized audio for recorder tests: a noise floor with transmissions
/// (voiced syllables with soft onsets) added, and the
/// frames where each one's first and last audible samples are.
public struct TransmissionScene {
  public var samples: [Float]
  public var rate: Double
  /// The first audible frame of each transmission.
  public var onsets: [Int] = []
  /// The frame after the last audible one of each transmission.
  public var ends: [Int] = []

  /// `seconds` of noise at `floor` dBFS RMS.
  public init(seconds: Double, floor: Double, seed: UInt64, rate: Double = 16_000) {
    self.rate = rate
    var random = SplitMix(seed: seed)
    let amplitude = Float(pow(10, floor / 20) * 3.0.squareRoot())
    samples = (0..<Int(seconds * rate)).map { _ in
      Float.random(in: -amplitude...amplitude, using: &random)
    }
  }

  /// A transmission at `start` seconds: voiced syllables (150 Hz and its
  /// harmonics) of 180 ms with 60 ms raised-cosine onsets, 40 ms
  /// releases and 70 ms between them, at `level` dBFS RMS, for about
  /// `seconds`. Its first audible sample is the first of its onset ramp.
  public mutating func talk(at start: Double, seconds: Double, level: Double = -26) {
    let syllable = 0.18
    let step = syllable + 0.07
    let count = max(1, Int((seconds + 0.07) / step))
    let amplitude = pow(10, level / 20) * 2.0.squareRoot() / 1.2
    let first = Int((start * rate).rounded())
    var last = first
    for index in 0..<count {
      let begin = first + Int(Double(index) * step * rate)
      let length = Int(syllable * rate)
      for offset in 0..<length where begin + offset < samples.count {
        let t = Double(offset) / rate
        let envelope =
          t < 0.06
          ? 0.5 - 0.5 * cos(Double.pi * t / 0.06)
          : (syllable - t < 0.04 ? 0.5 - 0.5 * cos(Double.pi * (syllable - t) / 0.04) : 1)
        let time = Double(begin + offset) / rate
        let voice = (1...6).reduce(0.0) {
          $0 + sin(2 * Double.pi * 150 * Double($1) * time) / Double($1)
        }
        samples[begin + offset] += Float(amplitude * envelope * voice)
      }
      last = begin + length
    }
    onsets.append(first)
    ends.append(last)
  }

  /// Writes the scene as a float WAV (so a recording can be bit-exact).
  public func write(to path: String) throws {
    let writer = try AudioFileWriter(
      path: path, sampleRate: rate, channelCount: 1, encoding: .float)
    try samples.withUnsafeBufferPointer {
      try writer.write($0.baseAddress!, frameCount: $0.count)
    }
    writer.close()
  }
}
