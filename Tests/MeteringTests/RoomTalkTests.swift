import Foundation
import Metering
import SignalDSP
import TestSupport
import Testing

/// The talk detector in backgrounds that are not steady: its level
/// distribution, clicks, a babble-like bed, and talk over that bed.
@Suite struct RoomTalkTests {
  static let rate = 48_000.0

  /// Talk segments (start, end) the meter reports for `samples`.
  func segments(_ samples: [Float]) -> [(Double, Double)] {
    MeterRun.segments(MeterRun.events(samples, sampleRate: Self.rate)).map { ($0.start, $0.end) }
  }

  /// White noise at `level` dBFS RMS (seeded), `seconds` long.
  func noise(_ seconds: Double, level: Double, seed: UInt64) -> [Float] {
    MeterRun.noise(seconds, level: level, seed: seed, sampleRate: Self.rate)
  }

  @Test func percentilesOfTheWindowOnly() {
    var distribution = LevelDistribution(windowCount: 100)
    #expect(distribution.percentile(0.5) == nil)
    for value in 0..<100 { distribution.add(Double(-value)) }  // 0 … -99 dB
    #expect(distribution.percentile(0.1) == -90)
    #expect(distribution.percentile(0.5) == -50)
    // A hundred more push the first hundred out of the window.
    for _ in 0..<100 { distribution.add(-20) }
    #expect(distribution.percentile(0.01) == -20)
    #expect(distribution.count == 100)
  }

  @Test func trackedPercentilesEqualAScanAtEveryStep() {
    var distribution = LevelDistribution(windowCount: 57, tracked: (0.03, 0.15))
    var random = SplitMix(seed: 3)
    var level = -50.0
    for step in 0..<5_000 {
      // A wandering level with jumps, outliers and clamped extremes.
      level += Double.random(in: -3...3, using: &random)
      if step % 400 == 0 { level = Double.random(in: -150...30, using: &random) }
      distribution.add(step % 37 == 0 ? level + 40 : level)
      let tracked = distribution.trackedPercentiles
      let scanned = distribution.percentiles(0.03, 0.15)
      #expect(
        tracked?.low == scanned?.low && tracked?.high == scanned?.high,
        "step \(step): \(String(describing: tracked)) vs \(String(describing: scanned))")
      if tracked?.low != scanned?.low || tracked?.high != scanned?.high { break }
    }
  }

  @Test func aTrainOfFiveMillisecondClicksNeverOpens() {
    var samples = noise(10, level: -60, seed: 1)
    var random = SplitMix(seed: 2)
    // Clicks 20 dB above the floor's RMS, several per second, like typing.
    let click = Int(0.005 * Self.rate)
    var position = Int(3 * Self.rate)
    while position < samples.count - click {
      for index in 0..<click {
        let decay = Float(exp(-Double(index) / (0.001 * Self.rate)))
        samples[position + index] += Float.random(in: -1...1, using: &random) * 0.17 * decay
      }
      position += Int(Double.random(in: 0.1...0.3, using: &random) * Self.rate)
    }
    #expect(segments(samples).isEmpty)
  }

  /// Babble-like: six "talkers", each noise switched on and off at a
  /// syllable rate (4 Hz) with its own phase, summed to `level` dBFS RMS.
  func bed(_ seconds: Double, level: Double, seed: UInt64) -> [Float] {
    var samples = [Float](repeating: 0, count: Int(seconds * Self.rate))
    var random = SplitMix(seed: seed + 100)
    for talker in 0..<6 {
      let voice = noise(seconds, level: level - 10 * log10(3), seed: seed + UInt64(talker))
      let phase = Double.random(in: 0...1, using: &random)
      let rate = Double.random(in: 3...5, using: &random)
      for index in 0..<samples.count {
        let t = Double(index) / Self.rate
        let syllable = 0.5 + 0.5 * sin(2 * Double.pi * (rate * t + phase))
        samples[index] += voice[index] * Float(syllable)
      }
    }
    return samples
  }

  @Test func aFluctuatingBedNeverOpens() {
    #expect(segments(bed(12, level: -30, seed: 3)).isEmpty)
  }

  @Test func talkTenDecibelsOverTheBedOpensWithinThirtyMilliseconds() {
    var samples = bed(12, level: -30, seed: 5)
    // "Speech": a voiced vowel-like tone with harmonics, 10 dB over the bed, at 8 s.
    let start = 8.0
    let amplitude = Decibels.amplitude(-20) * 2.0.squareRoot() / 1.5
    for index in Int(start * Self.rate)..<Int((start + 1) * Self.rate) {
      let t = Double(index) / Self.rate
      let voice = (1...4).reduce(0.0) {
        $0 + sin(2 * Double.pi * 180 * Double($1) * t) / Double($1)
      }
      samples[index] += Float(amplitude * voice)
    }
    let found = segments(samples)
    #expect(found.count == 1, "\(found)")
    if let first = found.first {
      #expect(abs(first.0 - start) <= 0.030, "opened at \(first.0)")
      // The end waits for the bed's next quiet moment below the close threshold.
      #expect(first.1 >= start + 1 - 0.05 && first.1 <= start + 2, "closed at \(first.1)")
    }
  }

  @Test func levelReadingsShowWhyTalkOpened() {
    var samples = bed(10, level: -30, seed: 9)
    let amplitude = Decibels.amplitude(-20) * 2.0.squareRoot()
    for index in Int(7 * Self.rate)..<Int(8 * Self.rate) {
      samples[index] += Float(amplitude * sin(2 * Double.pi * 440 * Double(index) / Self.rate))
    }
    var before = [LevelReading]()
    var during = [LevelReading]()
    for case .level(let reading) in MeterRun.events(samples, sampleRate: Self.rate) {
      if reading.time > 5 && reading.time <= 7 { before.append(reading) }
      if reading.time > 7.2 && reading.time <= 7.9 { during.append(reading) }
    }
    for reading in before + during {
      let evidence = reading.talkEvidence
      guard let speech = evidence.speechDecibels, let floor = evidence.noiseFloorDecibels,
        let open = evidence.openDecibels, let close = evidence.closeDecibels
      else {
        Issue.record("no evidence at \(reading.time) s")
        continue
      }
      #expect(
        open - floor >= TalkDetectorSettings().openThreshold - 1e-9 && close <= open
          && close > floor)
      if reading.time <= 7 {
        #expect(!reading.isTalking && speech < open, "\(reading.time) s: \(evidence)")
      } else {
        #expect(reading.isTalking && speech >= open, "\(reading.time) s: \(evidence)")
        #expect(abs(speech - (-20)) < 1.5, "the tone's band level: \(speech)")
      }
    }
  }

  /// "Speech" without a pause: noise whose level swings ±10 dB around
  /// `level` dBFS at a syllable rate (4.3 Hz), `seconds` long.
  func continuousSpeech(_ seconds: Double, level: Double, seed: UInt64) -> [Float] {
    var samples = noise(seconds, level: level, seed: seed)
    for index in samples.indices {
      let t = Double(index) / Self.rate
      samples[index] *= Float(Decibels.amplitude(10 * sin(2 * Double.pi * 4.3 * t)))
    }
    return samples
  }

  /// `background` with `speech` added from `seconds` on.
  func adding(_ speech: [Float], at seconds: Double, to background: [Float]) -> [Float] {
    var samples = background
    let start = Int(seconds * Self.rate)
    for index in speech.indices { samples[start + index] += speech[index] }
    return samples
  }

  @Test func fifteenSecondsOfSpeechWithoutAPauseIsOneSegment() {
    let found = segments(
      adding(
        continuousSpeech(15, level: -30, seed: 12), at: 4, to: noise(20, level: -60, seed: 11)))
    #expect(found.count == 1, "\(found.map { "\($0.0)–\($0.1)" })")
    if let first = found.first {
      #expect(abs(first.0 - 4) <= 0.05 && first.1 >= 18.9 && first.1 <= 19.1, "\(first)")
    }
  }

  @Test func aSteadyNoiseSwitchedOnEndsTalkWithinTwoSeconds() {
    var samples = noise(6, level: -60, seed: 13)
    samples += noise(10, level: -40, seed: 14)
    let found = segments(samples)
    #expect(found.count <= 1, "\(found)")
    for (start, end) in found {
      #expect(start >= 5.95 && end <= 6 + 2, "talk \(start)–\(end) s after a fan came on at 6 s")
    }
  }

  /// Noise at `level` dBFS whose level swings ±10 dB with a period of
  /// `period` seconds, like traffic passing (at its steepest 2π·10/period
  /// dB a second).
  func swellingNoise(_ seconds: Double, level: Double, period: Double, seed: UInt64) -> [Float] {
    var samples = noise(seconds, level: level, seed: seed)
    for index in samples.indices {
      let t = Double(index) / Self.rate
      samples[index] *= Float(Decibels.amplitude(10 * sin(2 * Double.pi * t / period)))
    }
    return samples
  }

  @Test(.slow, arguments: [20.0, 10.0])
  func trafficSwellingByTenDecibelsIsNoTalk(period: Double) {
    let found = segments(swellingNoise(90, level: -45, period: period, seed: 21))
    #expect(found.isEmpty, "a ±10 dB swell every \(period) s: \(found)")
  }

  @Test func speechOverSwellingTrafficIsStillTalk() {
    let found = segments(
      adding(
        continuousSpeech(6, level: -30, seed: 23), at: 12,
        to: swellingNoise(30, level: -45, period: 20, seed: 22)))
    #expect(found.count == 1, "\(found.map { "\($0.0)–\($0.1)" })")
    if let first = found.first {
      #expect(first.0 >= 11.9 && first.0 <= 12.1 && first.1 >= 17.8 && first.1 <= 18.3, "\(first)")
    }
  }
}
