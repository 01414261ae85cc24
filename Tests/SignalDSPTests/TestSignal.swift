import Foundation
import SignalDSP
import TestSupport

/// Builds test signals: tone bursts with chosen frequencies, levels and
/// timing, plus reproducible white noise at a chosen SNR.
struct TestSignal {
  let sampleRate: Double
  var samples: [Float] = []
  private var random: SplitMix

  init(sampleRate: Double, seed: UInt64 = 7) {
    self.sampleRate = sampleRate
    random = SplitMix(seed: seed)
  }

  /// Appends `duration` seconds of the sum of sines (amplitudes are peak, 1 = full scale).
  mutating func tone(_ frequencies: [Double], amplitudes: [Double], duration: Double) {
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

  mutating func append(_ other: TestSignal) { samples.append(contentsOf: other.samples) }

  mutating func silence(_ duration: Double) {
    samples.append(contentsOf: repeatElement(0, count: Int((duration * sampleRate).rounded())))
  }

  /// Adds white Gaussian noise whose power is `snr` dB below that of a sine of `amplitude`.
  mutating func addNoise(snr: Double, relativeTo amplitude: Double) {
    let sigma = (amplitude * amplitude / 2 / pow(10, snr / 10)).squareRoot()
    for index in samples.indices {
      let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
      let u2 = Double.random(in: 0..<1, using: &random)
      samples[index] += Float(sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
    }
  }

  /// Decodes the signal in blocks of varying size, as a device would deliver it.
  func decode(_ plans: [TonePlan], settings: ToneDetectionSettings = ToneDetectionSettings())
    throws -> [ToneDecoderEvent]
  {
    let decoder = try ToneDecoder(plans: plans, sampleRate: sampleRate, settings: settings)
    var events = [ToneDecoderEvent]()
    var offset = 0
    var block = 37
    samples.withUnsafeBufferPointer { all in
      while offset < all.count {
        let count = min(block, all.count - offset)
        decoder.process(UnsafeBufferPointer(rebasing: all[offset..<offset + count])) {
          events.append($0)
        }
        offset += count
        block = block * 7 % 1_021 + 16
      }
    }
    decoder.finish { events.append($0) }
    return events
  }
}

extension [ToneDecoderEvent] {
  var tones: [DecodedTone] {
    compactMap { if case .tone(let tone) = $0 { tone } else { nil } }
  }
  var sequences: [DecodedSequence] {
    compactMap { if case .sequence(let sequence) = $0 { sequence } else { nil } }
  }
  var symbols: String { String(tones.map(\.symbol)) }
}
