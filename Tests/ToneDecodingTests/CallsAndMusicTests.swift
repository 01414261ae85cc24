import Foundation
import TestSupport
import Testing
import TonePlans

@testable import ToneDecoding

/// Riffs, trills and arpeggios that land on a 5-tone plan's tones, their
/// notes swelling and wavering or off the plan's grid, make no call; an
/// encoder's calls, even of one digit repeated (a trill's very pattern),
/// still do.
@Suite struct CallsAndMusicTests {
  static let rate = 8_000.0
  static let plans: [TonePlan] = [.ccir1, .zvei1, .eea]

  /// `call` sent with `plan` as notes played: each tone's level follows
  /// `envelope` (dB, of the fraction of the note gone), its frequency is
  /// `scale` times the plan's with `vibrato` (relative depth, at 12 Hz: a synthesizer's),
  /// half a second of silence around it, in white noise at `snr` dB.
  static func played(
    _ plan: TonePlan, _ call: String, envelope: (Double) -> Double = { _ in 0 },
    scale: Double = 1, vibrato: Double = 0, snr: Double = 10
  ) throws -> [String] {
    var signal = TestSignal(sampleRate: rate, seed: 11)
    let amplitude = 0.3
    signal.silence(0.5)
    var phase = 0.4
    var time = 0.0
    for segment in try plan.schedule(for: call, sampleRate: rate) {
      let count = Int((segment.duration * rate).rounded())
      for n in 0..<count {
        let level = amplitude * pow(10, envelope(Double(n) / Double(count)) / 20)
        signal.samples.append(Float(level * sin(phase)))
        let frequency =
          segment.frequencies[0] * scale * (1 + vibrato * sin(2 * .pi * 12 * time))
        phase += 2 * .pi * frequency / rate
        time += 1 / rate
      }
      signal.silence(segment.gap)
    }
    signal.silence(0.5)
    signal.addNoise(snr: snr, relativeTo: amplitude)
    return try signal.decode([plan]).sequences.map(\.text)
  }

  /// A note that fades 4 dB over its length, as a held note through a
  /// player's release, or a call through a sagging receiver.
  static func fading(_ gone: Double) -> Double { -4 * gone }

  static let calls = ["12121", "22222", "35353", "90817"]

  @Test(arguments: plans)
  func heldCallsDecodeEvenWhenTheyRepeatLikeATrill(plan: TonePlan) throws {
    for call in Self.calls {
      #expect(try Self.played(plan, call) == [call], "\(plan.name) \(call)")
      #expect(try Self.played(plan, call, snr: 6) == [call], "\(plan.name) \(call) at 6 dB SNR")
    }
  }

  /// A level that sags alone is no note: the tones are still on pitch and
  /// steady. Sagging and off the plan's grid, or wavering, they are notes.
  /// (EEA's 40 ms tones are too short for the fade to count as a swell.)
  @Test(arguments: [TonePlan.ccir1, .zvei1])
  func fadingNotesMakeACallOnlyWhileOnPitchAndSteady(plan: TonePlan) throws {
    for call in Self.calls {
      #expect(try Self.played(plan, call, envelope: Self.fading) == [call], "\(plan.name) \(call)")
      let detuned = try Self.played(plan, call, envelope: Self.fading, scale: 1.018)
      #expect(detuned.isEmpty, "\(plan.name) \(call) 1.8 % sharp: \(detuned)")
      let vibrato = try Self.played(plan, call, envelope: Self.fading, vibrato: 0.016)
      #expect(vibrato.isEmpty, "\(plan.name) \(call) with vibrato: \(vibrato)")
    }
  }

  /// Five tones of `plan`'s digits 1 to 5, each with `spread`, `coherence`
  /// and `error` (relative, every tone sharp by it).
  static func tones(spread: Double, coherence: Double = 1, error: Double = 0) -> [ToneRun] {
    (1...5).map { digit in
      let nominal = TonePlan.zvei1.symbols[digit].frequencies[0]
      return ToneRun(
        symbol: digit, start: 0.07 * Double(digit), duration: 0.07,
        frequencies: (nominal * (1 + error), 0), levels: (-20, -.infinity), share: 0.95,
        levelSpread: spread, coherence: coherence)
    }
  }

  @Test func theRuleWeighsSpreadThenSteadinessAndPitch() {
    func encoded(_ tones: [ToneRun]) -> Bool {
      SelectiveCallRule.soundsEncoded(tones, plan: .zvei1)
    }
    // Held, or swelling a little as noise makes it: a call, however unsteady or off.
    #expect(encoded(Self.tones(spread: 0.4, coherence: 0.9, error: 0.02)))
    #expect(encoded(Self.tones(spread: 1.3, coherence: 0.9, error: 0.02)))
    // Swelling more, as a codec or a player makes it: a call only while steady and on pitch.
    #expect(encoded(Self.tones(spread: 2, coherence: 0.99, error: 0.012)))
    #expect(encoded(Self.tones(spread: 6, coherence: 0.97, error: 0)))
    #expect(!encoded(Self.tones(spread: 2, coherence: 0.95, error: 0.01)))
    #expect(!encoded(Self.tones(spread: 2, coherence: 0.99, error: 0.017)))
    // One tone a burst of noise spoilt does not decide it: the median does.
    var spoilt = Self.tones(spread: 0.5)
    spoilt[2].levelSpread = 6
    spoilt[2].coherence = 0.5
    #expect(encoded(spoilt))
  }
}
