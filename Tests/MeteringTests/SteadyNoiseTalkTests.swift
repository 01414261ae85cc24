import Foundation
import Metering
import SignalDSP
import TestSupport
import Testing

/// Talk 5 dB over steady noise (active-speech RMS to noise RMS, as the
/// synthetic evaluation mixes it): a steady room must never be mistaken
/// for talk, nor talk over it for the room — whether the talk comes after
/// the room was learned or while it is.
@Suite struct SteadyNoiseTalkTests {
  static let rate = 48_000.0

  enum Colour: String, CaseIterable, Sendable {
    case white, brown
  }

  /// Steady noise of `colour` at `level` dBFS RMS, `seconds` long (brown:
  /// white noise through a leaky integrator, so nearly all of it lies
  /// under the speech band).
  static func noise(_ colour: Colour, seconds: Double, level: Double, seed: UInt64) -> [Float] {
    var white = MeterRun.noise(seconds, level: 0, seed: seed, sampleRate: rate)
    if colour == .brown {
      var state: Float = 0
      for index in white.indices {
        state = 0.999 * state + white[index]
        white[index] = state
      }
    }
    let rms = (white.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(white.count))
      .squareRoot()
    let gain = Float(Decibels.amplitude(level) / rms)
    return white.map { $0 * gain }
  }

  /// Utterances of speech-like syllables at -30 dBFS RMS each, from
  /// `first` seconds on, with pauses of 0.8–2.5 s, 5 dB over steady
  /// `colour` noise; the truth is each utterance's span.
  static func scene(_ colour: Colour, first: Double, seed: UInt64)
    -> (samples: [Float], truth: [(start: Double, end: Double)])
  {
    var random = SplitMix(seed: seed)
    var voice = SyntheticSpeech(sampleRate: rate, seed: seed + 1)
    var truth = [(start: Double, end: Double)]()
    var time = first
    for _ in 0..<8 {
      let length = Double.random(in: 0.6...3.5, using: &random)
      truth.append((time, time + length))
      time += length + Double.random(in: 0.8...2.5, using: &random)
    }
    var samples = noise(colour, seconds: time + 1, level: -35, seed: seed + 2)
    for span in truth {
      samples = MeterRun.mix(
        voice.reading(seconds: span.end - span.start, level: -30), into: samples, at: span.start,
        sampleRate: rate)
    }
    return (samples, truth)
  }

  /// The share of the utterances' 10 ms frames (100 ms inside each edge)
  /// that talk covers, and of the frames 100 ms before an utterance up to
  /// 600 ms after it (the hold) that it covers.
  static func coverage(
    _ found: [(start: Double, end: Double)], truth: [(start: Double, end: Double)],
    seconds: Double
  ) -> (talk: Double, falseTalk: Double) {
    var talk = 0
    var speech = 0
    var falseTalk = 0
    var quiet = 0
    for frame in 0..<Int(seconds / 0.01) {
      let time = (Double(frame) + 0.5) * 0.01
      let detected = found.contains { time >= $0.start && time < $0.end }
      if truth.contains(where: { time >= $0.start + 0.1 && time < $0.end - 0.1 }) {
        speech += 1
        if detected { talk += 1 }
      } else if !truth.contains(where: { time >= $0.start - 0.1 && time < $0.end + 0.6 }) {
        quiet += 1
        if detected { falseTalk += 1 }
      }
    }
    return (Double(talk) / Double(max(1, speech)), Double(falseTalk) / Double(max(1, quiet)))
  }

  /// Talk after the room was learned: every utterance is one segment and
  /// the steady room is never talk.
  @Test(.slow, arguments: Colour.allCases)
  func speechFiveDecibelsOverSteadyNoiseIsTalk(colour: Colour) {
    let (samples, truth) = Self.scene(colour, first: 2.5, seed: 31)
    let found = MeterRun.segments(MeterRun.events(samples, sampleRate: Self.rate))
    let seconds = Double(samples.count) / Self.rate
    let score = Self.coverage(found, truth: truth, seconds: seconds)
    #expect(score.talk >= 0.95, "\(colour): \(score), found \(found), truth \(truth)")
    #expect(score.falseTalk <= 0.02, "\(colour): \(score)")
    for span in truth {
      let overlapping = found.filter { $0.end > span.start && $0.start < span.end }
      #expect(overlapping.count == 1, "\(colour): \(span) as \(overlapping)")
    }
  }

  /// Talk that begins 1.2 s into a stream of steady noise, while the
  /// room is still learned: half a second of a steady level is the room,
  /// so the talk is heard from its first syllable, and it does not become
  /// the room (it used to, and the next seconds of talk were missed).
  @Test(.slow, arguments: Colour.allCases)
  func talkWhileASteadyRoomIsLearnedIsHeardFromItsStart(colour: Colour) {
    let (samples, truth) = Self.scene(colour, first: 1.2, seed: 41)
    let found = MeterRun.segments(MeterRun.events(samples, sampleRate: Self.rate))
    let seconds = Double(samples.count) / Self.rate
    let score = Self.coverage(found, truth: truth, seconds: seconds)
    #expect(score.talk >= 0.95, "\(colour): \(score), found \(found), truth \(truth)")
    #expect(score.falseTalk <= 0.02, "\(colour): \(score)")
    let first = found.first { $0.end > truth[0].start }
    #expect(
      first.map { abs($0.start - truth[0].start) <= 0.05 } == true,
      "\(colour): \(String(describing: first)) for talk from \(truth[0].start) s")
  }

  /// A room that fluctuates by itself (the level stepping by up to ±2.5 dB
  /// every 80 ms, as a café does) is learned for the whole `learningTime`:
  /// when it grows 8 dB louder 1 s into the stream, that is the room, not
  /// talk.
  @Test func aFluctuatingRoomIsLearnedForTheWholeLearningTime() {
    var samples = MeterRun.noise(6, level: -40, seed: 51, sampleRate: Self.rate)
    var random = SplitMix(seed: 52)
    let step = Int(0.08 * Self.rate)
    for start in stride(from: 0, to: samples.count, by: step) {
      let louder = Double(start) / Self.rate >= 1 ? 8.0 : 0
      let gain = Float(Decibels.amplitude(louder + Double.random(in: -2.5...2.5, using: &random)))
      for index in start..<min(samples.count, start + step) { samples[index] *= gain }
    }
    let found = MeterRun.segments(MeterRun.events(samples, sampleRate: Self.rate))
    #expect(found.isEmpty, "\(found)")
  }
}
