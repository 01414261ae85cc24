import Foundation
import TestSupport
import Testing
import TonePlans

/// TR-BOS siren control: a double tone after a ZVEI call, named and linked.
@Suite struct SirenTests {
  /// A ZVEI call, `pause` seconds, then `signal` for `seconds`, at 10 dB SNR.
  static func alarm(
    call: String = "12345", pause: Double = 0.5, signal: Character, seconds: Double = 5,
    snr: Double = 10
  ) throws -> TestSignal {
    var audio = TestSignal(sampleRate: 8_000)
    audio.silence(0.5)
    for segment in try TonePlan.zvei1.schedule(for: call, sampleRate: 8_000) {
      audio.tone(segment.frequencies, amplitudes: [0.3], duration: segment.duration)
    }
    audio.silence(pause)
    audio.tone(
      TonePlan.siren.frequencies(of: signal)!, amplitudes: [0.2, 0.2], duration: seconds)
    audio.silence(1)
    audio.addNoise(snr: snr, relativeTo: 0.2)
    return audio
  }

  @Test(arguments: Array("FTWCA"))
  func everySignalIsNamedAndTiedToItsCall(signal: Character) throws {
    let events = try Self.alarm(signal: signal).decode([.siren])
    let names = [
      "F": "fire alarm", "T": "siren test", "W": "warning", "C": "civil defence alarm",
      "A": "all clear",
    ]
    let sirens = events.sequences.filter { $0.plan == "siren" }
    #expect(sirens.count == 1, "\(events.sequences)")
    let siren = try #require(sirens.first)
    #expect(siren.text == names[String(signal)])
    #expect(siren.symbols == String(signal))
    #expect(siren.call == "12345")
    // Reported at 2 s: the signal began 0.5 s after the call.
    #expect(abs(siren.time - (0.5 + 0.35 + 0.5)) < 0.05, "\(siren.time)")
    #expect(abs(siren.duration - 2) < 0.05, "\(siren.duration)")
    // The call itself is reported too (siren decodes ZVEI1 when no ZVEI plan is given).
    #expect(events.sequences.contains { $0.plan == "zvei1" && $0.text == "12345" })
  }

  /// A noise burst that cuts the double tone 0.4 s after it began (a
  /// fade on the radio link): one signal, from its true start, still tied
  /// to the call.
  @Test func aSignalCutByABreakIsOneSignalFromItsStart() throws {
    var audio = TestSignal(sampleRate: 8_000)
    audio.silence(0.5)
    for segment in try TonePlan.zvei1.schedule(for: "12345", sampleRate: 8_000) {
      audio.tone(segment.frequencies, amplitudes: [0.3], duration: segment.duration)
    }
    audio.silence(0.5)
    let tones = try #require(TonePlan.siren.frequencies(of: "F"))
    audio.tone(tones, amplitudes: [0.2, 0.2], duration: 0.4)
    audio.silence(0.15)
    audio.tone(tones, amplitudes: [0.2, 0.2], duration: 4.5)
    audio.silence(1)
    audio.addNoise(snr: 20, relativeTo: 0.2)
    let sirens = try audio.decode([.siren]).sequences.filter { $0.plan == "siren" }
    #expect(sirens.count == 1, "\(sirens)")
    let siren = try #require(sirens.first)
    #expect(siren.text == "fire alarm")
    #expect(siren.call == "12345")
    #expect(abs(siren.time - (0.5 + 0.35 + 0.5)) < 0.05, "\(siren.time)")
  }

  @Test func aSignalLongAfterTheCallIsForNoCall() throws {
    let events = try Self.alarm(pause: 3, signal: "W").decode([.siren, .zvei1])
    let siren = try #require(events.sequences.first { $0.plan == "siren" })
    #expect(siren.text == "warning")
    #expect(siren.call == nil)
  }

  @Test func aDoubleToneShorterThanTwoSecondsIsNoSignal() throws {
    let events = try Self.alarm(signal: "F", seconds: 1.5).decode([.siren])
    #expect(!events.sequences.contains { $0.plan == "siren" }, "\(events.sequences)")
  }

  @Test func sirenSignalsAreSentByLetter() throws {
    let segments = try TonePlan.siren.schedule(for: "fw", sampleRate: 8_000)
    #expect(segments.map(\.frequencies) == [[675, 1240], [675, 2280]])
    #expect(segments.allSatisfy { $0.duration == 5 })
  }
}
