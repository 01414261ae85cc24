import Foundation
import TestSupport
import Testing
import ToneDecoding
import TonePlans

/// Keys under a voice or music that takes some of their share, and a
/// voice that sings a key's pair of tones: the first decode, the second
/// never does.
@Suite struct KeysAndVoicesTests {
  /// Key 5 (770 + 1336 Hz) for 70 ms, each tone at 0.2, beside a steady
  /// third tone of `third` × 0.2 (taking share from the key as speech or
  /// music under it does), both tones gliding ±`glide` over the key.
  static func key(third: Double, glide: Double) throws -> String {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.3)
    let count = Int(0.07 * 8_000)
    var phases = (0.3, 1.1, 2.0)
    for n in 0..<count {
      let sweep = 1 + glide * (2 * Double(n) / Double(count - 1) - 1)
      phases.0 += 2 * .pi * 770 * sweep / 8_000
      phases.1 += 2 * .pi * 1336 * sweep / 8_000
      phases.2 += 2 * .pi * 2_500 / 8_000
      signal.samples.append(
        Float(0.2 * sin(phases.0) + 0.2 * sin(phases.1) + third * 0.2 * sin(phases.2)))
    }
    signal.silence(0.3)
    return try signal.decode([.dtmf]).symbols
  }

  /// A third tone at 0.7 leaves the key about 0.8 of the band, under the
  /// run share and the steady key's share alike: held locked on its tones
  /// it is a key all the same; gliding ±1 % (a voice's pair) it is not, nor
  /// is a key left with under `LockedKey.share` (a third tone at 0.9).
  @Test func aKeyLockedOnItsTonesKeepsAShareTakenByWhatIsUnderIt() throws {
    #expect(try Self.key(third: 0.7, glide: 0) == "5")
    #expect(try Self.key(third: 0.7, glide: 0.01) == "")
    #expect(try Self.key(third: 0.9, glide: 0) == "")
  }

  /// A sung /a/ (formants at 700 and 1220 Hz) on 174.25 Hz, whose 4th and
  /// 7th harmonics lie on key 1's tones (697 Hz, and 1219.75 Hz: 0.9 % off
  /// 1209), held for 2 s, steady or with a singer's vibrato (5.5 Hz,
  /// ±`vibrato`): no key.
  @Test(arguments: [0.0, 0.005, 0.02])
  func aSungVowelHeldForTwoSecondsIsNoKey(vibrato: Double) throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.2)
    let fundamental = 174.25
    let formants: [(center: Double, bandwidth: Double)] = [(700, 80), (1220, 90), (2600, 120)]
    let harmonics = Array(1...21)
    let amplitudes = harmonics.map { number -> Double in
      let frequency = fundamental * Double(number)
      return formants.map { formant in
        1 / (1 + pow((frequency - formant.center) / formant.bandwidth, 2))
      }.reduce(0, +) / Double(number).squareRoot()
    }
    let scale = 0.4 / amplitudes.reduce(0, +)
    var phase = 0.0
    for n in 0..<16_000 {
      let t = Double(n) / 8_000
      phase += 2 * .pi * fundamental * (1 + vibrato * sin(2 * .pi * 5.5 * t)) / 8_000
      var sample = 0.0
      for (index, number) in harmonics.enumerated() {
        sample += amplitudes[index] * sin(Double(number) * phase)
      }
      signal.samples.append(Float(scale * sample))
    }
    signal.silence(0.2)
    let decoded = try signal.decode([.dtmf])
    #expect(decoded.tones.isEmpty, "vibrato \(vibrato): \(decoded.symbols)")
  }
}
