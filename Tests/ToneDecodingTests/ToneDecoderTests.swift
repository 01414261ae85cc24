import Foundation
import TestSupport
import Testing
import ToneDecoding
import TonePlans

@Suite struct ToneDecoderTests {
  static let keys = "123A456B789C*0#D"

  /// Every DTMF key, with each tone scaled by its own factor, at `twist` dB
  /// (high group relative to low), the low tone at `amplitude`.
  static func dtmf(
    rate: Double, keys: String = keys, lowScale: Double = 1, highScale: Double = 1,
    twist: Double = 0, tone: Double = 0.04, pause: Double = 0.04, snr: Double? = nil,
    amplitude: Double = 0.3, seed: UInt64 = 7
  ) -> TestSignal {
    var signal = TestSignal(sampleRate: rate, seed: seed)
    signal.silence(0.1)
    for key in keys {
      let nominal = TonePlan.dtmf.frequencies(of: key)!
      signal.tone(
        [nominal[0] * lowScale, nominal[1] * highScale],
        amplitudes: [amplitude, amplitude * pow(10, twist / 20)], duration: tone)
      signal.silence(pause)
    }
    signal.silence(0.1)
    if let snr { signal.addNoise(snr: snr, relativeTo: amplitude) }
    return signal
  }

  @Test(arguments: [8_000.0, 44_100, 48_000])
  func dtmfDecodesEveryKeyAtTheLimitsOfAcceptance(rate: Double) throws {
    for (low, high) in [(1.015, 1.015), (0.985, 0.985), (1.015, 0.985), (0.985, 1.015)] {
      for twist in [-8.0, 4.0] {
        let signal = Self.dtmf(
          rate: rate, lowScale: low, highScale: high, twist: twist, snr: 6)
        let decoded = try signal.decode([.dtmf]).symbols
        #expect(
          decoded == Self.keys,
          "\(Int(rate)) Hz, error \(low)/\(high), twist \(twist) dB: got \(decoded)")
      }
    }
  }

  /// A key whose share a steady third tone dents to about 0.87 (an FM
  /// channel's limiter product) still decodes when it is held steadily on
  /// its frequencies; the same key gliding ±2 %, as a voice's harmonics do,
  /// does not, though the glide alone (no third tone) decodes; a faster
  /// glide never does.
  @Test func aSteadyKeyKeepsAShareDentedByAThirdTone() throws {
    func key(third: Double, glide: Double) throws -> String {
      var signal = TestSignal(sampleRate: 8_000)
      signal.silence(0.3)
      let count = Int(0.07 * 8_000)
      var phases = (0.3, 1.1, 2.0)
      for n in 0..<count {
        // Both tones sweep linearly from -glide to +glide over the key.
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
    #expect(try key(third: 0.55, glide: 0) == "5")
    #expect(try key(third: 0, glide: 0.02) == "5")
    #expect(try key(third: 0.55, glide: 0.02) == "")
    // Gliding ±4.5 % (on key on average, the whole band its own) is a
    // voice's harmonic pair, not a key: its phases do not advance steadily.
    #expect(try key(third: 0, glide: 0.045) == "")
  }

  @Test func dtmfReportsTimeDurationFrequenciesAndLevels() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.5)
    signal.tone([770, 1336], amplitudes: [0.5, 0.25], duration: 0.07)
    signal.silence(0.2)
    let tones = try signal.decode([.dtmf]).tones
    try #require(tones.count == 1)
    #expect(tones[0].symbol == "5")
    #expect(abs(tones[0].time - 0.5) <= 0.005)
    #expect(abs(tones[0].duration - 0.07) <= 0.005)
    #expect(abs(tones[0].frequencies[0] - 770) < 2 && abs(tones[0].frequencies[1] - 1336) < 2)
    #expect(abs(tones[0].levels[0] - -6.02) < 0.3 && abs(tones[0].levels[1] - -12.04) < 0.3)
  }

  @Test(arguments: [8_000.0, 48_000])
  func dtmfRejectsTonesOffByMoreThanThreeAndAHalfPercent(rate: Double) throws {
    for (low, high) in [(1.035, 1.0), (0.965, 1.0), (1.0, 1.035), (1.0, 0.965), (1.05, 1.05)] {
      let signal = Self.dtmf(rate: rate, lowScale: low, highScale: high, tone: 0.1, pause: 0.1)
      let decoded = try signal.decode([.dtmf]).symbols
      #expect(decoded.isEmpty, "\(Int(rate)) Hz, error \(low)/\(high): got \(decoded)")
    }
  }

  @Test(arguments: [8_000.0, 48_000])
  func dtmfRejectsTonesShorterThan23Milliseconds(rate: Double) throws {
    for length in [0.010, 0.020, 0.023] {
      let decoded = try Self.dtmf(rate: rate, tone: length, pause: 0.05).decode([.dtmf]).symbols
      #expect(decoded.isEmpty, "\(Int(length * 1000)) ms tones at \(Int(rate)) Hz: got \(decoded)")
    }
  }

  @Test func repeatedDigitsWithFortyMillisecondPausesStayApart() throws {
    let signal = Self.dtmf(rate: 8_000, keys: "55500", snr: 10)
    #expect(try signal.decode([.dtmf]).symbols == "55500")
  }

  @Test func silenceAndNoiseDecodeNothing() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(5)
    signal.addNoise(snr: 0, relativeTo: 0.3)
    #expect(try signal.decode(TonePlan.all.filter { $0.name != "handshake" }).isEmpty)
  }

  @Test func ratesTooLowForAPlanAreRefusedWithTheRateNeeded() {
    do {
      _ = try ToneDecoder(plans: [.handshake], sampleRate: 8_000)
      Issue.record("handshake accepted at 8 kHz")
    } catch {
      #expect(error.description.contains("at least"), "\(error)")
    }
  }
}
