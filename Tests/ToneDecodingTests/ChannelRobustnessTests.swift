import Foundation
import TestSupport
import Testing
import TonePlans

/// What radio and telephone channels do to tones, one effect at a time.
@Suite struct ChannelRobustnessTests {
  /// A 5-tone call whose tones are hit by FM clicks every 12 ms: each
  /// click is a 1 ms doublet at twice the tone's amplitude (enough to
  /// drown the tone's share of 20 ms frames), over noise at 15 dB SNR.
  @Test(arguments: [TonePlan.zvei1, .ccir1, .eea])
  func clicksDoNotBreakACall(plan: TonePlan) throws {
    var signal = try SequenceDecoderTests.signal(plan, calls: ["12345", "67890"], snr: 15)
    let rate = signal.sampleRate
    let length = Int(0.001 * rate)
    var position = Int(0.3 * rate)
    while position + length < signal.samples.count {
      for offset in 0..<length {
        signal.samples[position + offset] += offset < length / 2 ? 0.6 : -0.6
      }
      position += Int(0.012 * rate)
    }
    let texts = try signal.decode([plan]).sequences.map(\.text)
    #expect(texts == ["12345", "67890"], "\(plan.name)")
  }

  /// An SDR's audio keeps the CTCSS sub-tone (the receiver's 300 Hz voice
  /// filter is not there), louder than the DTMF tones over it.
  @Test func dtmfOverALoudSubToneDecodes() throws {
    var signal = ToneDecoderTests.dtmf(rate: 22_050, tone: 0.07, pause: 0.07, amplitude: 0.15)
    for index in signal.samples.indices {
      signal.samples[index] += Float(0.25 * sin(2 * Double.pi * 103.5 * Double(index) / 22_050))
    }
    #expect(try signal.decode([.dtmf]).symbols == ToneDecoderTests.keys)
  }

  /// A GSM codec's onset: the first 25 ms of each key have the high tone
  /// 8 dB too loud (a twist of +8 dB, past the limit), the rest is right.
  @Test func aCodecOvershootAtTheOnsetDoesNotDecideTheTwist() throws {
    var signal = TestSignal(sampleRate: 8_000)
    signal.silence(0.2)
    for key in ToneDecoderTests.keys {
      let frequencies = TonePlan.dtmf.frequencies(of: key)!
      var burst = TestSignal(sampleRate: 8_000)
      burst.tone(frequencies, amplitudes: [0.05, 0.05 * pow(10, 8.0 / 20)], duration: 0.025)
      var rest = TestSignal(sampleRate: 8_000)
      rest.tone(frequencies, amplitudes: [0.05, 0.05], duration: 0.055)
      // Continue the phase: both pieces start at the same phase, so join at
      // a whole number of periods of neither; the join is what a codec does.
      signal.append(burst)
      signal.append(rest)
      signal.silence(0.07)
    }
    signal.addNoise(snr: 25, relativeTo: 0.05)
    #expect(try signal.decode([.dtmf]).symbols == ToneDecoderTests.keys)
  }

  /// A key pressed twice with a 60 ms pause full of noise (a radio's hiss)
  /// is two keys: a tone is held over dents in its share, never over a
  /// pause where its level is gone.
  @Test func aNoisyPauseBetweenTwoPressesOfOneKeyIsKept() throws {
    var signal = ToneDecoderTests.dtmf(
      rate: 8_000, keys: "1100#5#55", tone: 0.07, pause: 0.06, snr: 12)
    signal.samples = signal.samples.map { $0 }
    #expect(try signal.decode([.dtmf]).symbols == "1100#5#55")
  }
}
