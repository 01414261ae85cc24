import CVectorKernels
import Foundation
import TestSupport
import Testing
import ToneDecoding
import TonePlans

/// CTCSS: the 50 standard sub-tones under voice, and nothing from voice or
/// music alone.
@Suite struct CTCSSTests {
  static let rate = 8_000.0

  /// A voice stand-in as a radio sends it (its band starts at 300 Hz): the
  /// 3rd to 10th harmonics of a pitch gliding between 110 and 180 Hz.
  static func voice(seconds: Double, amplitude: Double) -> [Float] {
    var phase = 0.0
    return (0..<Int(seconds * rate)).map { n in
      let t = Double(n) / rate
      phase += 2 * .pi * (145 + 35 * sin(2 * .pi * 3.7 * t)) / rate
      var value = 0.0
      for harmonic in 3...10 { value += sin(Double(harmonic) * phase) / Double(harmonic) }
      return Float(amplitude * value / 1.2)
    }
  }

  static func sine(_ frequency: Double, seconds: Double, amplitude: Double, start: Double = 0)
    -> [Float]
  {
    (0..<Int(seconds * rate)).map { n in
      Double(n) / rate < start
        ? 0 : Float(amplitude * sin(2 * .pi * frequency * Double(n) / rate + 0.3))
    }
  }

  static func decode(_ samples: [Float]) throws -> [DecodedTone] {
    var signal = TestSignal(sampleRate: rate)
    signal.samples = samples
    return try signal.decode([.ctcss]).compactMap {
      if case .tone(let tone) = $0 { return tone } else { return nil }
    }
  }

  /// Each tone, 0.3 % off (as encoders may be) and 18 dB below the voice,
  /// starting 0.5 s into it for 3 s: found as itself — never a neighbour
  /// 2.3 Hz away — with its start within 250 ms.
  @Test(.slow, arguments: [-0.003, 0.003]) func everyStandardToneIsFoundUnderVoice(error: Double)
    throws
  {
    guard case .subAudible(let table) = TonePlan.ctcss.kind else {
      Issue.record("ctcss is not a sub-audible plan")
      return
    }
    #expect(table.count == 50)
    let voice = Self.voice(seconds: 4, amplitude: 0.1)
    var wrong = [String]()
    for standard in table {
      let tone = Self.sine(
        standard * (1 + error), seconds: 3.5, amplitude: 0.1 * pow(10, -18.0 / 20), start: 0.5)
      var samples = voice
      for index in tone.indices { samples[index] += tone[index] }
      let found = try Self.decode(samples)
      guard found.count == 1, let first = found.first, first.frequencies == [standard],
        first.time >= 0.5 - 0.05 && first.time <= 0.75, abs(first.duration - 3) <= 0.3
      else {
        wrong.append("\(standard) Hz: \(found.map { ($0.frequencies, $0.time, $0.duration) })")
        continue
      }
    }
    #expect(wrong.isEmpty, "\(wrong)")
  }

  /// Without a radio's 300 Hz filter the voice's fundamental (6 dB louder
  /// than the sub-tone) sweeps through it now and then: the tone is still
  /// one tone, held through the sweeps for most of its 4.5 s. (Its start
  /// may come late when the sweep crosses it right then; where the pitch
  /// lingers on it at the top of the sweep, 131.8 Hz here, it is cut in two.)
  @Test(arguments: [107.2, 118.8])
  func aToneUnderUnfilteredVoiceIsHeldWhole(standard: Double) throws {
    var phase = 0.0
    var samples = (0..<Int(5 * Self.rate)).map { n -> Float in
      let t = Double(n) / Self.rate
      phase += 2 * .pi * (120 + 20 * sin(2 * .pi * 0.9 * t)) / Self.rate
      var value = 0.0
      for harmonic in 1...10 { value += sin(Double(harmonic) * phase) / Double(harmonic) }
      return Float(0.1 * value / 1.6)
    }
    let tone = Self.sine(standard, seconds: 5, amplitude: 0.1 * pow(10, -10.0 / 20), start: 0.5)
    for index in samples.indices { samples[index] += tone[index] }
    let found = try Self.decode(samples)
    #expect(found.count == 1 && found.first?.frequencies == [standard], "\(found)")
    if let first = found.first {
      #expect(first.duration >= 3.5 && first.time + first.duration >= 4.9, "\(first)")
    }
  }

  /// A pager's tones sent over the carrier's sub-tone, as loud as it once
  /// the receiver's de-emphasis has lifted the sub-tone: steady, but
  /// started after it and at no simple ratio to it, so the sub-tone stays.
  @Test func aPageOverTheSubToneDoesNotHideIt() throws {
    var samples = Self.sine(88.5, seconds: 6, amplitude: 0.05, start: 0.2)
    for (index, value) in Self.sine(669.9, seconds: 1.6, amplitude: 0.05, start: 0.6).enumerated() {
      samples[index] += value
    }
    let b = Self.sine(1153.4, seconds: 4.6, amplitude: 0.05, start: 1.6)
    for index in samples.indices where index < b.count { samples[index] += b[index] }
    let found = try Self.decode(samples)
    #expect(found.map(\.frequencies) == [[88.5]])
    if let tone = found.first { #expect(abs(tone.time - 0.2) <= 0.1 && tone.duration >= 5.5) }
  }

  @Test func voiceAloneIsNoTone() throws {
    #expect(try Self.decode(Self.voice(seconds: 10, amplitude: 0.3)).isEmpty)
  }

  /// C♯2 is 69.3 Hz and E2 82.4 Hz: a chord holds them as steadily as an
  /// encoder, but never alone.
  @Test func chordsOnStandardFrequenciesAreNoTone() throws {
    var pure = [Float](repeating: 0, count: Int(3 * Self.rate))
    for note in [69.30, 87.31, 103.83] {
      for (index, value) in Self.sine(note, seconds: 3, amplitude: 0.2).enumerated() {
        pure[index] += value
      }
    }
    #expect(try Self.decode(pure).isEmpty)
    var rich = [Float](repeating: 0, count: Int(3 * Self.rate))
    for harmonic in 1...5 {
      for (index, value) in Self.sine(
        82.41 * Double(harmonic), seconds: 3, amplitude: 0.3 / Double(harmonic)
      ).enumerated() {
        rich[index] += value
      }
    }
    #expect(try Self.decode(rich).isEmpty)
  }

  /// Alone, each is found; mains hum under it does not count as music.
  @Test func aToneOverMainsHumIsFound() throws {
    var samples = Self.sine(88.5, seconds: 3, amplitude: 0.05)
    for (index, value) in Self.sine(50, seconds: 3, amplitude: 0.05).enumerated() {
      samples[index] += value
    }
    let found = try Self.decode(samples)
    #expect(found.map(\.frequencies) == [[88.5]])
  }

  /// A sub-tone held for 6 s under voice is reported as started while it
  /// still sounds (once it lasted 0.8 s: within 1.1 s of its start), with
  /// the start and frequency of the `tone` event that follows when it ends;
  /// one shorter than 0.8 s is neither.
  @Test func aLongToneIsReportedWhileItSounds() throws {
    let decoder = try ToneDecoder(plans: [.ctcss], sampleRate: Self.rate)
    let tone = Self.sine(
      136.5, seconds: 8, amplitude: 0.1 * pow(10, -18.0 / 20), start: 1)
    var samples = Self.voice(seconds: 8, amplitude: 0.1)
    for index in samples.indices where Double(index) / Self.rate < 7 {
      samples[index] += tone[index]
    }
    var events = [(event: ToneDecoderEvent, heard: Double)]()
    var offset = 0
    samples.withUnsafeBufferPointer { all in
      while offset < all.count {
        let count = min(160, all.count - offset)
        offset += count
        decoder.process(UnsafeBufferPointer(rebasing: all[offset - count..<offset])) {
          events.append(($0, Double(offset) / Self.rate))
        }
      }
    }
    decoder.finish { events.append(($0, Double(offset) / Self.rate)) }
    guard events.count == 2, case .toneStart(let started) = events[0].event,
      case .tone(let ended) = events[1].event
    else {
      Issue.record("expected a tone_start, then a tone: \(events)")
      return
    }
    #expect(events[0].heard <= 1 + 1.1)
    #expect(started.time == ended.time && started.frequencies == [136.5])
    #expect(ended.frequencies == [136.5] && abs(ended.duration - 6) <= 0.3)
    #expect(events[1].heard >= 7)

    var short = Self.voice(seconds: 3, amplitude: 0.1)
    for (index, value) in Self.sine(136.5, seconds: 1.7, amplitude: 0.02, start: 1).enumerated() {
      short[index] += value
    }
    var signal = TestSignal(sampleRate: Self.rate)
    signal.samples = short
    #expect(try signal.decode([.ctcss]).isEmpty)
  }

  /// A voice's pitch lingering on the sub-tone's frequency for 0.6 s
  /// (10 dB louder, beating with it) hides it from every window; the tone
  /// comes back on its phase line and is one tone, not two.
  @Test func aVoiceLingeringOnTheToneDoesNotCutItInTwo() throws {
    var samples = Self.sine(151.4, seconds: 6, amplitude: 0.01, start: 0.5)
    for n in Int(2.0 * Self.rate)..<Int(2.6 * Self.rate) {
      let t = Double(n) / Self.rate
      samples[n] += Float(0.032 * sin(2 * .pi * (151.1 * t + 0.5 * t * t)))
    }
    let found = try Self.decode(samples)
    #expect(found.count == 1, "\(found)")
    #expect(
      abs((found.first?.time ?? 0) - 0.5) <= 0.1 && abs((found.first?.duration ?? 0) - 5.5) <= 0.3)
  }

  /// Two transmissions through one repeater, the same sub-tone from two
  /// encoders (phase and frequency a little apart), 0.4 s between them: two
  /// tones, each with its own start.
  @Test func twoTransmissionsOnOneToneAreTwoTones() throws {
    let first = Self.sine(127.3, seconds: 3, amplitude: 0.01, start: 0.5)
    let second = (0..<Int(3 * Self.rate)).map { n in
      Float(0.012 * sin(2 * .pi * 127.3 * 1.002 * Double(n) / Self.rate + 2.1))
    }
    let found = try Self.decode(first + [Float](repeating: 0, count: Int(0.4 * Self.rate)) + second)
    #expect(found.count == 2, "\(found)")
    guard found.count == 2 else { return }
    #expect(abs(found[0].time - 0.5) <= 0.1 && abs(found[0].duration - 2.5) <= 0.3)
    #expect(abs(found[1].time - 3.4) <= 0.1 && abs(found[1].duration - 3) <= 0.3)
    #expect(found.allSatisfy { $0.frequencies == [127.3] })
  }

  @Test func theSubToneCannotBeSentAsAMessage() {
    #expect(throws: TonePlanError.self) {
      try TonePlan.ctcss.schedule(for: "67.0", sampleRate: 8_000)
    }
  }

  /// The detector's search for spectral peaks finds, in order, exactly the
  /// bins above the one below and not below the one above: on noise, on
  /// plateaus and ties (quantised powers), past NaN, for every span length.
  @Test func peakSearchFindsEveryLocalMaximumInOrder() {
    var random = SplitMix(seed: 21)
    for length in 3...40 {
      for quantised in [false, true] {
        var power = (0..<length).map { _ in Double.random(in: 0...1, using: &random) }
        if quantised { power = power.map { ($0 * 4).rounded() } }
        if length > 10 { power[length / 2] = .nan }
        let (low, high) = (1, length - 2)
        let expected = (low...high).filter {
          power[$0] > power[$0 - 1] && power[$0] >= power[$0 + 1]
        }
        var bins = [Int](repeating: -1, count: length)
        let count = power.withUnsafeBufferPointer { power in
          bins.withUnsafeMutableBufferPointer {
            vk_local_maxima(power.baseAddress!, low, high, $0.baseAddress!)
          }
        }
        #expect(Array(bins[..<count]) == expected, "length \(length)")
      }
    }
  }
}
