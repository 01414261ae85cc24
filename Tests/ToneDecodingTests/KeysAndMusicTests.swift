import Foundation
import TestSupport
import Testing
import ToneDecoding
import TonePlans

/// Music that puts two notes on a key's tones, and keys over what a line
/// or a radio carries under them: the first never decode, the second do.
@Suite struct KeysAndMusicTests {
  static let rate = 8_000.0

  /// 100 ms of key 5's pair (770 + 1336 Hz) scaled by `scale`, each tone
  /// at 0.2 and beating as a chorused note does when `beats` (each tone two
  /// voices `beats.0` and `beats.1` Hz apart), over `under` (a function of
  /// the sample's time in seconds), between 0.3 s of `under` alone.
  static func pair(
    scale: Double = 1, beats: (Double, Double)? = nil, under: (Double) -> Double = { _ in 0 }
  ) throws -> String {
    var signal = TestSignal(sampleRate: rate)
    let lead = Int(0.3 * rate)
    let count = Int(0.1 * rate)
    for n in 0..<(2 * lead + count) {
      let t = Double(n) / rate
      var sample = under(t)
      if n >= lead && n < lead + count {
        let s = Double(n - lead) / rate
        for (index, frequency) in [770.0 * scale, 1336.0 * scale].enumerated() {
          if let beats {
            let apart = index == 0 ? beats.0 : beats.1
            sample +=
              0.1 * sin(2 * .pi * (frequency - apart / 2) * s + 0.3)
              + 0.1 * sin(2 * .pi * (frequency + apart / 2) * s + 1.9 + Double(index))
          } else {
            sample += 0.2 * sin(2 * .pi * frequency * s + 0.3 + Double(index))
          }
        }
      }
      signal.samples.append(Float(sample))
    }
    return try signal.decode([.dtmf]).symbols
  }

  /// A band's bass under the pair: a 55 Hz note with its next three
  /// harmonics and a kick drum every 250 ms, together about as loud as
  /// the pair.
  static func bass(_ t: Double) -> Double {
    var value = 0.0
    for harmonic in 1...4 {
      value += 0.12 / Double(harmonic) * sin(2 * .pi * 55 * Double(harmonic) * t)
    }
    let sinceKick = t.truncatingRemainder(dividingBy: 0.25)
    value +=
      0.4 * exp(-sinceKick / 0.04) * sin(2 * .pi * (60 + 90 * exp(-sinceKick / 0.02)) * sinceKick)
    return value
  }

  /// A radio's CTCSS sub-tone (100 Hz) louder than the pair.
  static func subTone(_ t: Double) -> Double { 0.35 * sin(2 * .pi * 100 * t) }

  /// Q.23 lets a keypad be 1.8 % off: a pair 1.7 % off is a key, one
  /// 2.3 % off (within the settings' wider tolerance) is a musical
  /// interval that happens to lie near one.
  @Test func aPairFurtherOffThanAKeypadMayBeIsNoKey() throws {
    #expect(try Self.pair(scale: 1.017) == "5")
    #expect(try Self.pair(scale: 0.983) == "5")
    #expect(try Self.pair(scale: 1.023) == "")
    #expect(try Self.pair(scale: 0.977) == "")
  }

  /// Two chorused notes 1 % off key 5, each beating at its own rate so
  /// that their levels swing apart, are two notes; held steadily the same
  /// pair is a key, and so is the beating pair on the key's own tones.
  @Test func twoNotesBeatingApartOffAKeysTonesAreNoKey() throws {
    #expect(try Self.pair(scale: 1.01, beats: (15, 35)) == "")
    #expect(try Self.pair(scale: 1.01) == "5")
    #expect(try Self.pair(scale: 1, beats: (15, 35)) == "5")
  }

  /// Over a band's bass a pair 1 % off, beating, is no key even where a
  /// steadier one would be; a key held as a generator holds it is a key
  /// over the same bass, and over a radio's sub-tone louder than itself.
  @Test func aPairOverABandsBassMustBeHeldLikeAKey() throws {
    #expect(try Self.pair(scale: 1.008, beats: (9, 10), under: Self.bass) == "")
    #expect(try Self.pair(scale: 1.008, beats: (9, 10)) == "5")
    #expect(try Self.pair(under: Self.bass) == "5")
    #expect(try Self.pair(under: Self.subTone) == "5")
    #expect(try Self.pair(scale: 1.012, under: Self.subTone) == "5")
  }
}
