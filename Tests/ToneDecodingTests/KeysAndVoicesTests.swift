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
  /// it is a key all the same; gliding ±1 % (a voice's pair) it is not. A
  /// third tone at 0.9 leaves it about 0.71, under `LockedKey.share`: still
  /// a key held this steadily (`DentedKey`), since nothing under it is a
  /// voice, and so at 1.2 (a share of about 0.58); at 1.6 (about 0.44,
  /// under `DentedKey.share`) no key.
  @Test func aKeyLockedOnItsTonesKeepsAShareTakenByWhatIsUnderIt() throws {
    #expect(try Self.key(third: 0.7, glide: 0) == "5")
    #expect(try Self.key(third: 0.7, glide: 0.01) == "")
    #expect(try Self.key(third: 0.9, glide: 0) == "5")
    #expect(try Self.key(third: 0.9, glide: 0.01) == "")
    #expect(try Self.key(third: 1.2, glide: 0) == "5")
    #expect(try Self.key(third: 1.2, glide: 0.01) == "")
    #expect(try Self.key(third: 1.6, glide: 0) == "")
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

/// A man's vowel whose harmonics land on a key's row and column, against a
/// key with such a voice under it: the first is no key, the second is.
@Suite struct MensVoicesTests {
  /// A vowel for `seconds` on `pitch` wobbling by `jitter` (relative) at
  /// 6 Hz, at 8 kHz: its harmonics up to the `highest`-th under 3.9 kHz, the `formants.0`-th at 1
  /// and the `formants.1`-th at 0.5 (a man's formants on them), every
  /// other at `others`; peak `level`.
  static func vowel(
    pitch: Double, seconds: Double, jitter: Double, others: Double, level: Double,
    formants: (Int, Int) = (4, 7), highest: Int = 20
  ) -> [Double] {
    let count = Int(seconds * 8_000)
    var phase = 0.0
    var samples = [Double](repeating: 0, count: count)
    for n in 0..<count {
      let t = Double(n) / 8_000
      phase += 2 * .pi * pitch * (1 + jitter * sin(2 * .pi * 6 * t)) / 8_000
      let ramp = min(1, Double(min(n, count - 1 - n)) / 80)
      var sample = 0.0
      for harmonic in 1...highest where Double(harmonic) * pitch < 3_900 {
        let amplitude = harmonic == formants.0 ? 1 : harmonic == formants.1 ? 0.5 : others
        sample += amplitude * sin(Double(harmonic) * phase + 0.7 * Double(harmonic))
      }
      samples[n] = ramp * sample
    }
    let peak = samples.map(abs).max() ?? 1
    return samples.map { level * $0 / peak }
  }

  /// Vowels of 80 and 100 ms on 172.3 Hz, whose 4th and 7th harmonics lie
  /// on key 1 (689 Hz, 1.1 % under 697, and 1206 Hz, 0.25 % under 1209)
  /// with the rest 22 dB under the 4th: the pair holds 0.9 of the band and
  /// advances as steadily as a key (each was key 1), but the voice's other
  /// harmonics stand over what lies between them.
  @Test(arguments: [(0.08, 0.0), (0.1, 0.002)])
  func aMansVowelOnAKeysTonesIsNoKey(seconds: Double, jitter: Double) throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.2)
    signal.samples += Self.vowel(
      pitch: 172.3, seconds: seconds, jitter: jitter, others: 0.08, level: 0.4
    ).map { Float($0) }
    signal.silence(0.2)
    let decoded = try signal.decode([.dtmf])
    #expect(decoded.tones.isEmpty, "\(seconds) s: \(decoded.symbols)")
  }

  /// Vowels on 99.6 Hz whose 7th and 15th harmonics lie on key 3 (697 Hz,
  /// and 1494 Hz: 1.2 % over 1477), each of which passed for key 3: one of
  /// 50 ms held steady with the rest 18 dB under the 7th, one of 80 ms
  /// wavering by 0.5 % with the rest 22 dB under. In a 20 ms frame the
  /// harmonics, two bins apart, blur into each other; over the whole vowel
  /// they stand apart, and the wavering spreads beside the tones' lines.
  @Test(arguments: [(0.05, 0.0, 0.12), (0.08, 0.005, 0.08)])
  func aLowVoiceOnAKeysTonesIsNoKey(seconds: Double, jitter: Double, others: Double) throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.2)
    signal.samples += Self.vowel(
      pitch: 99.6, seconds: seconds, jitter: jitter, others: others, level: 0.4,
      formants: (7, 15), highest: 40
    ).map { Float($0) }
    signal.silence(0.2)
    let decoded = try signal.decode([.dtmf])
    #expect(decoded.tones.isEmpty, "\(seconds) s, \(jitter), \(others): \(decoded.symbols)")
  }

  /// Key 1 for 60 ms (each tone at 0.2) over the same vowel, 10 and 15 dB
  /// under the key by RMS, its harmonics every one on the pitch the key's
  /// pair could imply: the key, since it is held on its tones.
  @Test(arguments: [10.0, 15.0])
  func aKeyOverASamePitchVowelIsAKey(under: Double) throws {
    let voice = Self.vowel(pitch: 172.3, seconds: 0.4, jitter: 0.002, others: 0.3, level: 1)
    let voiceRMS = (voice.map { $0 * $0 }.reduce(0, +) / Double(voice.count)).squareRoot()
    let keyRMS = 0.2
    let gain = keyRMS * pow(10, -under / 20) / voiceRMS
    let keyStart = Int(0.15 * 8_000)
    let keyCount = Int(0.06 * 8_000)
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.2)
    for n in 0..<voice.count {
      var sample = gain * voice[n]
      if n >= keyStart && n < keyStart + keyCount {
        let t = Double(n - keyStart) / 8_000
        sample += 0.2 * sin(2 * .pi * 697 * t + 0.4) + 0.2 * sin(2 * .pi * 1209 * t + 1.3)
      }
      signal.samples.append(Float(sample))
    }
    signal.silence(0.2)
    #expect(try signal.decode([.dtmf]).symbols == "1")
  }

  /// A held note whose two partials lie 0.8 % and 1 % off key #'s tones
  /// (933.2 and 1462.9 Hz, as a sampled oboe's did), under a louder third
  /// partial for `covered` seconds and then alone for 100 ms: alone, its
  /// pair passes every test of a key, but it was sounding before (the
  /// oboe's false `#`), so it is no key. The same pair rising out of
  /// silence (`covered` 0) is key #.
  static func heldNote(covered: Double) throws -> String {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.3)
    let coveredCount = Int(covered * 8_000)
    var phases = (0.3, 1.1, 2.0)
    for n in 0..<(coveredCount + 800) {
      phases.0 += 2 * .pi * 933.2 / 8_000
      phases.1 += 2 * .pi * 1462.9 / 8_000
      phases.2 += 2 * .pi * 2_500 / 8_000
      let third = n < coveredCount ? 0.32 * sin(phases.2) : 0
      signal.samples.append(Float(0.2 * sin(phases.0) + 0.2 * sin(phases.1) + third))
    }
    signal.silence(0.3)
    return try signal.decode([.dtmf]).symbols
  }

  @Test func aHeldNoteWhosePartialsLieOnAKeyIsNoKeyWhenItSoundedBefore() throws {
    #expect(try Self.heldNote(covered: 0) == "#")
    #expect(try Self.heldNote(covered: 0.3) == "")
  }
}
