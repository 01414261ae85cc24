import Foundation
import SignalDSP
import TestSupport
import Testing

@testable import Metering

@Suite struct TalkDetectorTests {
  /// The branch-free median against a sort, on every order of five values
  /// (ties included).
  @Test func medianOfFiveIsTheMiddleValueInAnyOrder() {
    let sets: [[Float]] = [[1, 2, 3, 4, 5], [-3, 7, 7, 0, 2], [5, 5, 5, 1, 9]]
    for values in sets {
      var orders: [[Float]] = [[]]
      for _ in 0..<5 {
        orders = orders.flatMap { order in
          values.indices.filter { index in
            order.filter { $0 == values[index] }.count < values.filter { $0 == values[index] }.count
          }.map { order + [values[$0]] }
        }
      }
      let expected = values.sorted()[2]
      for order in orders {
        var lanes = SIMD8<Float>(repeating: 100)
        for index in 0..<5 { lanes[index] = order[index] }
        #expect(TalkDetector.medianOfFive(lanes) == expected, "\(order)")
      }
    }
  }

  /// The detector's own framing of band samples: a burst after the room
  /// was learned is one segment, dated to the frame (the click-free median
  /// needs three of its five frames, so up to 30 ms late).
  @Test func burstInNoiseIsOneSegmentAtTheRightTime() {
    let rate = 8_000.0
    var detector = TalkDetector(settings: TalkDetectorSettings(), envelopeRate: rate)
    var generator = SplitMix(seed: 21)
    var band = [Float]()
    for n in 0..<Int(6 * rate) {
      let noise = Float.random(in: -0.01...0.01, using: &generator)
      let t = Double(n) / rate
      let tone: Float = (t >= 3 && t < 4) ? Float(0.2 * sin(2 * Double.pi * 500 * t)) : 0
      band.append(noise + tone)
    }
    var transitions = [TriggerTransition]()
    band.withUnsafeBufferPointer { detector.process($0) { transitions.append($0) } }
    #expect(transitions.map(\.isStart) == [true, false])
    guard transitions.count == 2 else { return }
    let start = Double(transitions[0].position) / rate
    let end = Double(transitions[1].position) / rate
    #expect(start >= 3 && start <= 3.03, "started at \(start)")
    // The end: the median's lag (dated back), then the release down to
    // the close level (9 dB under the peak: 26 ms), to the frame.
    #expect(end > 4 && end < 4.12, "ended at \(end)")
    #expect(!detector.isTalking)
  }

  @Test func absoluteThresholdsIgnoreTheBackground() {
    var settings = TalkDetectorSettings()
    settings.isAbsolute = true
    settings.openThreshold = -25
    settings.closeThreshold = -35
    let rate = 8_000.0
    var detector = TalkDetector(settings: settings, envelopeRate: rate)
    // Half a second of silence, a second of a sine at -23 dBFS RMS, silence.
    let band = (0..<Int(2.5 * rate)).map { n -> Float in
      let t = Double(n) / rate
      return t >= 0.5 && t < 1.5 ? Float(0.1 * sin(2 * Double.pi * 440 * t)) : 0
    }
    var transitions = [TriggerTransition]()
    band.withUnsafeBufferPointer { detector.process($0) { transitions.append($0) } }
    #expect(transitions.map(\.isStart) == [true, false])
    guard transitions.count == 2 else { return }
    let start = Double(transitions[0].position) / rate
    let end = Double(transitions[1].position) / rate
    #expect(start >= 0.5 && start <= 0.53, "started at \(start)")
    #expect(end >= 1.5 && end <= 1.6, "ended at \(end)")
    #expect(detector.evidence.noiseFloorDecibels == nil)
  }

  // MARK: The background

  static let frame = TalkDetector.frameDuration

  /// Feeds `seconds` of frames at `level` dB (every `dipEvery`-th frame at
  /// `dip` dB instead) and returns the background in dB.
  static func feed(
    _ background: inout HeldBackground, seconds: Double, level: Double, isTalking: Bool,
    dip: Double? = nil, dipEvery: Int = 50
  ) -> Double {
    for index in 0..<Int((seconds / frame).rounded()) {
      let decibels = dip != nil && index % dipEvery == dipEvery - 1 ? dip! : level
      let before = background.power < 0 ? decibels : 10 * log10(background.power)
      background.update(
        power: pow(10, decibels / 10), decibels: decibels, background: before,
        isTalking: isTalking)
    }
    return 10 * log10(background.power)
  }

  /// A voice that goes on for a minute, with the dips between its words,
  /// never becomes its own background.
  @Test func talkCannotDragTheBackgroundUp() {
    let settings = TalkDetectorSettings()
    var background = HeldBackground(settings: settings, frameDuration: Self.frame)
    let room = Self.feed(&background, seconds: settings.learningTime, level: -60, isTalking: false)
    #expect(abs(room + 60) < 0.5)
    let after = Self.feed(
      &background, seconds: 60, level: -30, isTalking: true, dip: -60, dipEvery: 50)
    #expect(abs(after + 60) < 1, "background \(after) dB after a minute of talk at -30 dB")
  }

  /// Talk without a frame near the background for `escapeTime`: the room
  /// itself got louder, and the background rises at `escapeRate`.
  @Test func withoutDipsTheBackgroundEscapesAtItsRate() {
    let settings = TalkDetectorSettings()
    var background = HeldBackground(settings: settings, frameDuration: Self.frame)
    _ = Self.feed(&background, seconds: settings.learningTime, level: -60, isTalking: false)
    let held = Self.feed(
      &background, seconds: settings.escapeTime - 0.1, level: -20, isTalking: true)
    #expect(abs(held + 60) < 0.1, "held at \(held)")
    let later = Self.feed(&background, seconds: 2.1, level: -20, isTalking: true)
    let expected = -60 + 2 * settings.escapeRate
    #expect(abs(later - expected) < 0.3, "\(later) dB, expected \(expected)")
  }

  /// With talk closed, a room that got 10 dB louder is followed within
  /// ten seconds, however little each frame may move it.
  @Test func aLouderRoomIsFollowedWhileClosed() {
    let settings = TalkDetectorSettings()
    var background = HeldBackground(settings: settings, frameDuration: Self.frame)
    _ = Self.feed(&background, seconds: settings.learningTime, level: -60, isTalking: false)
    let soon = Self.feed(&background, seconds: 1, level: -50, isTalking: false)
    #expect(soon < -57, "a second of a louder room moved it to \(soon)")
    let later = Self.feed(&background, seconds: 9, level: -50, isTalking: false)
    #expect(abs(later + 50) < 1.5, "\(later) dB after ten seconds")
  }

  /// While the room is learned every frame counts at once.
  @Test func theRoomIsLearnedAtOnce() {
    let settings = TalkDetectorSettings()
    var background = HeldBackground(settings: settings, frameDuration: Self.frame)
    _ = Self.feed(&background, seconds: 0.1, level: -90, isTalking: false)
    let learned = Self.feed(&background, seconds: 0.5, level: -50, isTalking: false)
    #expect(abs(learned + 50) < 1, "\(learned)")
    #expect(background.isLearning)
  }

  /// Talk open while the room is learned (it opened on digital silence) is
  /// not learned; only when it stayed clear of the background for the last
  /// `learnedRoomTime` of learning is it the room, at its mean level.
  @Test func talkWhileLearningIsTheRoomOnlyWhenItNeverPauses() {
    let settings = TalkDetectorSettings()
    var background = HeldBackground(settings: settings, frameDuration: Self.frame)
    _ = Self.feed(&background, seconds: 0.1, level: -90, isTalking: false)
    let early = Self.feed(&background, seconds: 0.5, level: -50, isTalking: true)
    #expect(early < -85, "\(early)")
    let learned = Self.feed(
      &background, seconds: settings.learningTime - 0.6, level: -50, isTalking: true)
    #expect(!background.isLearning)
    #expect(abs(learned + 50) < 1, "\(learned)")
  }

  /// The spread: steady hiss about 1 dB, a level swinging ±5 dB several.
  @Test func spreadIsHowFarTheRoomDipsByItself() {
    let settings = TalkDetectorSettings()
    var random = SplitMix(seed: 5)
    func spread(swing: Double) -> Double {
      var background = HeldBackground(settings: settings, frameDuration: Self.frame)
      for _ in 0..<1_000 {
        let decibels = -50 + Double.random(in: -swing...swing, using: &random)
        let before = background.power < 0 ? decibels : 10 * log10(background.power)
        background.update(
          power: pow(10, decibels / 10), decibels: decibels, background: before, isTalking: false)
      }
      return background.spread
    }
    let steady = spread(swing: 0.5)
    let swinging = spread(swing: 5)
    #expect(steady < 1, "steady: \(steady)")
    #expect(swinging > 2.5 && swinging < 6, "swinging: \(swinging)")
  }

  // MARK: Talk in the meter

  /// A stream that starts mid-sentence learns the talker as its room; the
  /// first pause of the room brings the background down, so the next
  /// sentence is talk from its first word (it used to stay silence for
  /// minutes).
  @Test(.slow) func aStreamStartedMidSentenceHearsTheNextOne() {
    // Syllables 70 ms apart at -26 dBFS over a -46 dBFS room, from the
    // first frame; a 2 s pause; more of them.
    var scene = TransmissionScene(seconds: 24, floor: -46, seed: 6, rate: 48_000)
    scene.talk(at: 0, seconds: 8)
    scene.talk(at: 10, seconds: 8)
    let found = MeterRun.segments(MeterRun.events(scene.samples))
    let second = found.first { $0.end > 12 }
    #expect(second.map { abs($0.start - 10) <= 0.1 } == true, "\(found)")
  }

  /// A 20 s continuous reading at -35 dBFS in a -70 dBFS room is talk
  /// throughout: one segment from its first word to its last.
  @Test func twentySecondsOfReadingIsTalkThroughout() {
    var voice = SyntheticSpeech(sampleRate: 48_000, seed: 3)
    let reading = voice.reading(seconds: 20, level: -35)
    let samples = MeterRun.mix(
      reading, into: MeterRun.noise(24, level: -70, seed: 4), at: 2)
    let found = MeterRun.segments(MeterRun.events(samples))
    #expect(found.count == 1, "\(found)")
    if let first = found.first {
      #expect(abs(first.start - 2) <= 0.05, "\(first)")
      #expect(abs(first.end - 22) <= 0.2, "\(first)")
    }
  }

  /// Two phrases around a comma's 350 ms pause are one stretch of talk;
  /// a 700 ms breath ends it (the hold is not a seconds-long hang).
  @Test func aCommaPauseStaysTalkABreathEndsIt() {
    func segments(pause: Double) -> [(start: Double, end: Double)] {
      var voice = SyntheticSpeech(sampleRate: 48_000, seed: 8)
      var phrases = voice.reading(seconds: 2, level: -30)
      // The reading may end in a word gap: the pause starts at its last sound.
      while phrases.last == 0 { phrases.removeLast() }
      phrases += [Float](repeating: 0, count: Int(pause * 48_000))
      phrases += voice.reading(seconds: 2, level: -30)
      let samples = MeterRun.mix(phrases, into: MeterRun.noise(7, level: -65, seed: 9), at: 2)
      return MeterRun.segments(MeterRun.events(samples))
    }
    let comma = segments(pause: 0.35)
    #expect(comma.count == 1, "\(comma)")
    let breath = segments(pause: 0.7)
    #expect(breath.count == 2, "\(breath)")
    if breath.count == 2 {
      #expect(breath[1].start - breath[0].end > 0.6, "\(breath)")
    }
  }

  /// A stream that begins in digital silence (a file of prompts) has no
  /// room to learn: its first word is talk at once. One that begins in a
  /// room learns it first: nothing opens until the room is learned (a
  /// steady one in `steadyLearningTime`, any other in `learningTime`).
  @Test func digitalSilenceNeedsNoLearning() {
    var voice = SyntheticSpeech(sampleRate: 48_000, seed: 12)
    let phrase = voice.reading(seconds: 2, level: -30)
    let silent = MeterRun.mix(phrase, into: [Float](repeating: 0, count: 3 * 48_000), at: 0.3)
    let inSilence = MeterRun.segments(MeterRun.events(silent))
    #expect(inSilence.count == 1, "\(inSilence)")
    #expect(abs((inSilence.first?.start ?? 0) - 0.3) < 0.05, "\(inSilence)")
    let learning = TalkDetectorSettings().learningTime
    let roomy = MeterRun.mix(
      phrase, into: MeterRun.noise(learning + 3, level: -65, seed: 13), at: learning + 0.2)
    let inRoom = MeterRun.segments(MeterRun.events(roomy))
    #expect(inRoom.count == 1, "\(inRoom)")
    #expect(abs((inRoom.first?.start ?? 0) - learning - 0.2) < 0.05, "\(inRoom)")
  }

  /// A reading that starts on a file's digital silence (a prompt) is one
  /// stretch of talk from its first word, through a first phrase spoken
  /// without a gap, a softer word 6 dB down and a comma, all while the
  /// room is learned, to the end of a 5 s reading whose word gaps are a
  /// -60 dBFS room.
  @Test func aReadingAfterDigitalSilenceIsNotLearnedAsTheRoom() {
    /// A voiced stretch without gaps: 200 Hz and its harmonics, its level
    /// swinging ±3 dB four times a second, `level` dBFS RMS.
    func voiced(_ seconds: Double, level: Double) -> [Float] {
      let gain = Decibels.amplitude(level) / 0.9
      return (0..<Int(seconds * 48_000)).map { n in
        let t = Double(n) / 48_000
        var value = 0.0
        for harmonic in 1...8 {
          value += sin(Double(harmonic) * 2 * .pi * 200 * t) / Double(harmonic)
        }
        return Float(gain * (1 + 0.35 * sin(2 * .pi * 4 * t)) * value / 1.5)
      }
    }
    var voice = SyntheticSpeech(sampleRate: 48_000, seed: 31)
    var reading = voiced(0.65, level: -20) + voiced(0.2, level: -26)
    reading += [Float](repeating: 0, count: 14_400)
    reading += voice.reading(seconds: 3.6, level: -20)
    let room = [Float](repeating: 0, count: 12_000) + MeterRun.noise(6, level: -60, seed: 32)
    let found = MeterRun.segments(MeterRun.events(MeterRun.mix(reading, into: room, at: 0.25)))
    #expect(found.count == 1, "\(found)")
    if let first = found.first {
      #expect(abs(first.start - 0.25) <= 0.05, "\(first)")
      #expect(first.end > 4.9 && first.end < 5.4, "\(first)")
    }
  }

  /// The printed evidence explains the decision, in a stream with a quiet
  /// room, a reading whose level changes by 20 dB from phrase to phrase,
  /// and a noise that comes on: whenever talk is closed, `speech` is under
  /// `open`; no threshold is ever above full scale; the background never
  /// climbs into the reading.
  @Test(.slow) func theEvidenceExplainsTheDecision() {
    var voice = SyntheticSpeech(sampleRate: 48_000, seed: 21)
    var samples = MeterRun.noise(40, level: -72, seed: 22)
    var position = 2.0
    for level in [-25.0, -45, -30, -42, -22] {
      samples = MeterRun.mix(voice.reading(seconds: 4, level: level), into: samples, at: position)
      position += 4.4
    }
    samples = MeterRun.mix(MeterRun.noise(12, level: -50, seed: 23), into: samples, at: 28)
    var readings = 0
    for case .level(let reading) in MeterRun.events(samples) {
      let evidence = reading.talkEvidence
      guard let speech = evidence.speechDecibels, let floor = evidence.noiseFloorDecibels,
        let close = evidence.closeDecibels
      else { continue }
      readings += 1
      #expect(close <= 0 && floor < close, "\(reading.time) s: \(evidence)")
      if let open = evidence.openDecibels {
        #expect(open <= 0 && close <= open, "\(reading.time) s: \(evidence)")
        if !reading.isTalking { #expect(speech < open, "\(reading.time) s: \(evidence)") }
      }
      if reading.time > 3 && reading.time < 23 {
        #expect(floor < -60, "the background climbed to \(floor) at \(reading.time) s")
      }
    }
    #expect(readings > 350)
  }
}
