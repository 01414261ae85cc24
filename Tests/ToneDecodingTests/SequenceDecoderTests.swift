import Foundation
import TestSupport
import Testing
import TonePlans

@Suite struct SequenceDecoderTests {
  static let fiveTonePlans = TonePlan.all.filter {
    if case .sequential = $0.kind { true } else { false }
  }

  /// `calls` sent with `plan`, a second of silence around each, every
  /// frequency scaled by `scale` and every tone lengthened by `stretch`.
  static func signal(
    _ plan: TonePlan, calls: [String], rate: Double = 8_000, scale: Double = 1,
    stretch: Double = 1, snr: Double? = 10, seed: UInt64 = 3
  ) throws -> TestSignal {
    var signal = TestSignal(sampleRate: rate, seed: seed)
    let amplitude = 0.3
    for call in calls {
      signal.silence(0.5)
      for segment in try plan.schedule(for: call, sampleRate: rate) {
        signal.tone(
          segment.frequencies.map { $0 * scale }, amplitudes: [amplitude],
          duration: segment.duration * stretch)
        signal.silence(segment.gap)
      }
    }
    signal.silence(0.5)
    if let snr { signal.addNoise(snr: snr, relativeTo: amplitude) }
    return signal
  }

  @Test(.slow, arguments: fiveTonePlans)
  func everyFiveTonePlanDecodesItsOwnCallsExactly(plan: TonePlan) throws {
    let alphabet = String(plan.symbols.map(\.symbol).filter { $0 != "E" })
    let calls = ["12345", "12335", "90000", String(alphabet.suffix(5)), "11222"]
    for scale in [0.985, 1.0, 1.015] {
      for stretch in [0.9, 1.1] {
        let events = try Self.signal(plan, calls: calls, scale: scale, stretch: stretch).decode([
          plan
        ])
        #expect(
          events.sequences.map(\.text) == calls,
          "\(plan.name) ×\(scale) freq, ×\(stretch) length: \(events.sequences.map(\.text))")
      }
    }
  }

  @Test func repeatToneIsReportedRawAndExpanded() throws {
    let events = try Self.signal(.ccir1, calls: ["12335"]).decode([.ccir1])
    try #require(events.sequences.count == 1)
    #expect(events.sequences[0].symbols == "123E5")
    #expect(events.sequences[0].text == "12335")
    #expect(events.tones.map(\.symbol) == ["1", "2", "3", "E", "5"])
    #expect(abs(events.sequences[0].time - 0.5) < 0.01)
    #expect(abs(events.sequences[0].duration - 0.5) < 0.02)
    for tone in events.tones { #expect(abs(tone.duration - 0.1) < 0.015, "\(tone)") }
  }

  /// A squelch tail's whistle right after a call, 20 dB below it, is no
  /// sixth digit: one encoder sends a call's tones at one level.
  @Test func aMuchWeakerToneRightAfterACallIsNotPartOfIt() throws {
    var signal = TestSignal(sampleRate: 8_000, seed: 5)
    signal.silence(0.5)
    for segment in try TonePlan.eea.schedule(for: "36245", sampleRate: 8_000) {
      signal.tone(segment.frequencies, amplitudes: [0.3], duration: segment.duration)
    }
    let whistle = try #require(TonePlan.eea.symbols.first { $0.symbol == "F" })
    signal.tone(whistle.frequencies, amplitudes: [0.03], duration: 0.04)
    signal.silence(0.5)
    let weak = try signal.decode([.eea])
    #expect(weak.sequences.map(\.text) == ["36245"], "\(weak.sequences)")
    // At the call's level the same tone is its sixth digit.
    var loud = TestSignal(sampleRate: 8_000, seed: 5)
    loud.silence(0.5)
    for segment in try TonePlan.eea.schedule(for: "36245", sampleRate: 8_000) {
      loud.tone(segment.frequencies, amplitudes: [0.3], duration: segment.duration)
    }
    loud.tone(whistle.frequencies, amplitudes: [0.3], duration: 0.04)
    loud.silence(0.5)
    #expect(try loud.decode([.eea]).sequences.map(\.text) == ["36245F"])
  }

  /// GSM 06.10 scatters the tones of one call by up to 15.5 dB from tone
  /// to tone; a squelch tail's whistle comes 20 dB down (above).
  @Test(arguments: [TonePlan.zvei1, .eea])
  func aCallWhoseTonesACodecScatteredIsOneCall(plan: TonePlan) throws {
    var signal = TestSignal(sampleRate: 8_000, seed: 9)
    signal.silence(0.5)
    // Each tone 0, -15, -3, -15 and -1 dB from the first.
    let levels = [0.0, -15, -3, -15, -1]
    for (segment, level) in zip(try plan.schedule(for: "26153", sampleRate: 8_000), levels) {
      signal.tone(
        segment.frequencies, amplitudes: [0.3 * pow(10, level / 20)], duration: segment.duration)
      signal.silence(segment.gap)
    }
    signal.silence(0.5)
    signal.addNoise(snr: 30, relativeTo: 0.3)
    let decoded = try signal.decode([plan])
    #expect(decoded.sequences.map(\.text) == ["26153"], "\(decoded.sequences)")
  }

  /// Run times are sums of frame hops: a gap that measures exactly half a
  /// tone (ZVEI's 35 ms, from 40 ms of silence) must not split the call
  /// on a rounding error; 50 ms of silence does.
  @Test func aGapOfExactlyHalfAToneKeepsTheCallTogether() throws {
    func decoded(gap: Double) throws -> [String] {
      var signal = TestSignal(sampleRate: 8_000, seed: 4)
      signal.silence(0.5)
      for segment in try TonePlan.zvei1.schedule(for: "26153", sampleRate: 8_000) {
        signal.tone(segment.frequencies, amplitudes: [0.3], duration: segment.duration)
        signal.silence(gap)
      }
      signal.silence(0.5)
      signal.addNoise(snr: 30, relativeTo: 0.3)
      return try signal.decode([.zvei1]).sequences.map(\.text)
    }
    #expect(try decoded(gap: 0.04) == ["26153"])
    #expect(try decoded(gap: 0.05).isEmpty)
  }

  @Test func tonesOfTheWrongLengthOrTooFewMakeNoCall() throws {
    // CCIR-1 tones at 40 ms are EEA's length, not CCIR-1's 100 ms.
    let short = try Self.signal(.ccir1, calls: ["12345"], stretch: 0.4).decode([.ccir1])
    #expect(short.isEmpty, "\(short)")
    let fewer = try Self.signal(.ccir1, calls: ["123"]).decode([.ccir1])
    #expect(fewer.isEmpty, "\(fewer)")
  }

  @Test func severalPlansAtOnceDoNotCrossTalk() throws {
    var signal = try Self.signal(.ccir1, calls: ["12345"], snr: nil)
    let dtmf = ToneDecoderTests.dtmf(rate: 8_000, keys: "159#", tone: 0.07, pause: 0.07)
    signal.append(dtmf)
    signal.append(try Self.signal(.eea, calls: ["67890"], snr: nil))
    signal.addNoise(snr: 10, relativeTo: 0.3)
    let events = try signal.decode([.dtmf, .ccir1, .eea])
    #expect(events.tones.filter { $0.plan == "dtmf" }.map(\.symbol) == ["1", "5", "9", "#"])
    #expect(events.sequences.map { "\($0.plan) \($0.text)" } == ["ccir-1 12345", "eea 67890"])
  }

  @Test(arguments: [44_100.0, 48_000])
  func handshakeDecodesTextAtTenDecibelsSNR(rate: Double) throws {
    let text = rate > 44_100 ? "Hello, World 42!" : "CAFE 2026 #1"
    for scale in [1.0, 1.0005] {
      var signal = TestSignal(sampleRate: rate, seed: 11)
      signal.silence(0.3)
      for segment in try TonePlan.handshake.schedule(for: text, sampleRate: rate) {
        signal.tone(
          segment.frequencies.map { $0 * scale }, amplitudes: [0.3], duration: segment.duration)
      }
      signal.silence(0.6)
      signal.addNoise(snr: 10, relativeTo: 0.3)
      let events = try signal.decode([.handshake])
      #expect(events.sequences.map(\.text) == [text], "\(Int(rate)) Hz ×\(scale)")
      #expect(events.tones.count == text.count)
    }
  }
}
