import AllocationCounter
import FeedbackControl
import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct HowlGuardTests {
  static let rate = 48_000.0

  /// A sine whose level grows `growth` dB/s from `level` dBFS at `start` s
  /// (a howl in the making), silent before and after `end` s.
  static func howl(
    _ frequency: Double, start: Double, end: Double, level: Double, growth: Double, count: Int
  ) -> [Float] {
    signal(count: count) { t in
      guard t >= start && t < end else { return 0 }
      return pow(10, (level + growth * (t - start)) / 20) * sin(2 * .pi * frequency * t)
    }
  }

  /// `count` samples of `sample(time in seconds)`.
  static func signal(count: Int, _ sample: (Double) -> Double) -> [Float] {
    (0..<count).map { Float(sample(Double($0) / rate)) }
  }

  static func noise(count: Int, level: Double, seed: UInt64) -> [Float] {
    var random = SplitMix(seed: seed)
    let scale = Float(pow(10, level / 20) * 3.0.squareRoot())
    return (0..<count).map { _ in Float.random(in: -1...1, using: &random) * scale }
  }

  static func sum(_ signals: [Float]...) -> [Float] {
    (0..<signals[0].count).map { n in signals.reduce(0) { $0 + $1[n] } }
  }

  /// Runs `input` through `guard` in 256-frame periods, telling it the
  /// output gain `gain(time)` gets; the output and the events.
  static func run(
    _ input: [Float], _ howlGuard: HowlGuard, gain: (Double) -> Double = { _ in 0 }
  ) -> (output: [Float], events: [HowlGuardEvent]) {
    var output = input
    var events = [HowlGuardEvent]()
    output.withUnsafeMutableBufferPointer { buffer in
      var start = 0
      while start < buffer.count {
        let frames = min(256, buffer.count - start)
        howlGuard.process(
          buffer.baseAddress! + start, frameCount: frames, time: Double(start) / rate,
          gainDecibels: gain(Double(start) / rate)
        ) { events.append($0) }
        start += frames
      }
    }
    return (output, events)
  }

  /// The level (dB) of a sine of `frequency` in `samples[range]`.
  static func sineLevel(_ samples: [Float], _ frequency: Double, _ range: Range<Int>) -> Double {
    var re = 0.0
    var im = 0.0
    for n in range {
      let w = 0.5 - 0.5 * cos(2 * .pi * Double(n - range.lowerBound) / Double(range.count))
      re += Double(samples[n]) * w * cos(2 * .pi * frequency * Double(n) / rate)
      im += Double(samples[n]) * w * sin(2 * .pi * frequency * Double(n) / rate)
    }
    return 20 * log10(4 * (re * re + im * im).squareRoot() / Double(range.count))
  }

  /// Runs `input` through `howlGuard` in 256-frame periods at the gain
  /// `gain(first frame)`; with `watching`, this thread's allocations from
  /// the second period on (0 without).
  static func allocations(
    _ input: [Float], _ howlGuard: HowlGuard, watching: Bool, gain: (Int) -> Double,
    onEvent: (HowlGuardEvent) -> Void = { _ in }
  ) -> Int {
    var samples = input
    var allocations = 0
    samples.withUnsafeMutableBufferPointer { buffer in
      for start in stride(from: 0, to: buffer.count, by: 256) {
        if watching && start == 256 { allocation_counter_watch_current_thread(1) }
        howlGuard.process(
          buffer.baseAddress! + start, frameCount: 256, time: Double(start) / rate,
          gainDecibels: gain(start)
        ) { onEvent($0) }
      }
      if watching {
        allocations = allocation_counter_thread_count()
        allocation_counter_watch_current_thread(0)
      }
    }
    return allocations
  }

  /// The ring-out plan of a committed room after loopback's 768 frames of buffering.
  static func ringOut(_ room: String) throws -> RingOutPlan {
    try #require(
      RingOutPlan(
        impulseResponse: try RoomFixtures.response(room), sampleRate: rate, delay: 768,
        settings: HowlGuardSettings()))
  }

  func makeGuard(_ settings: HowlGuardSettings = HowlGuardSettings()) -> HowlGuard {
    HowlGuard(settings: settings, sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256)
  }

  /// After the gain rose (a howl's commonest cause), a sine growing
  /// 80 dB/s is notched within 0.4 s.
  @Test func aGrowingSineIsNotchedWhileStillQuiet() throws {
    let count = Int(2 * Self.rate)
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 1),
      Self.howl(2500, start: 0.5, end: 2, level: -70, growth: 80, count: count))
    let (output, events) = Self.run(input, makeGuard()) { $0 < 0.45 ? -3 : 0 }
    let first = try #require(events.first)
    #expect(first.action == .notch)
    #expect(abs(first.frequency - 2500) < 10)
    #expect(first.depth <= -9)
    // Found within 0.4 s of starting to grow: 32 dB up, still under −35 dBFS.
    #expect(first.time < 0.9, "found at \(first.time) s")
    let tail = (count - 9600)..<count
    #expect(Self.sineLevel(input, 2500, tail) - Self.sineLevel(output, 2500, tail) >= 9)
  }

  @Test func aSteepHowlJustAfterTheGainRoseIsNotchedSooner() throws {
    let count = Int(1.5 * Self.rate)
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 3),
      Self.howl(2500, start: 0.5, end: 1.5, level: -66, growth: 200, count: count))
    let steady = try #require(Self.run(input, makeGuard()).events.first)
    // The gain rose 6 dB 50 ms before the howl starts: the short span is in use.
    let raised = try #require(
      Self.run(input, makeGuard()) { $0 < 0.45 ? -6 : 0 }.events.first)
    #expect(steady.action == .notch && raised.action == .notch)
    #expect(abs(steady.frequency - 2500) < 10 && abs(raised.frequency - 2500) < 10)
    #expect(
      raised.time <= steady.time - 0.02,
      "after the rise at \(raised.time) s, without it at \(steady.time) s")
  }

  @Test func notesStruckJustAfterTheGainRoseAreLeftAlone() {
    let count = Int(3 * Self.rate)
    let music = Self.signal(count: count) { t in
      var x = 0.0
      // A sine struck with a 30 ms attack at 0.5 s.
      if t > 0.5 { x += 0.1 * min(1, (t - 0.5) / 0.03) * sin(2 * .pi * 1000 * t) }
      // A 220 Hz saw struck at 1.5 s.
      if t > 1.5 {
        for k in 1...12 { x += 0.05 / Double(k) * sin(2 * .pi * 220 * Double(k) * t) }
      }
      // DTMF keys of 100 ms every 200 ms from 2.5 s.
      if t > 2.5 && (t - 2.5).truncatingRemainder(dividingBy: 0.2) < 0.1 {
        x += 0.05 * (sin(2 * .pi * 770 * t) + sin(2 * .pi * 1336 * t))
      }
      return x
    }
    let input = Self.sum(music, Self.noise(count: count, level: -70, seed: 4))
    // The gain rises 3 dB 50 ms before each sound starts.
    let (output, events) = Self.run(input, makeGuard()) { time in
      time < 0.45 ? -9 : time < 1.45 ? -6 : time < 2.45 ? -3 : 0
    }
    #expect(events.isEmpty, "\(events)")
    #expect(output == input)
  }

  @Test func steadyNotesChordsVibratoAndKeysAreLeftAlone() {
    let count = Int(4 * Self.rate)
    let music = Self.signal(count: count) { t in
      var x = 0.0
      // A sine held from 0.2 s after a 50 ms attack.
      if t > 0.2 { x += 0.1 * min(1, (t - 0.2) / 0.05) * sin(2 * .pi * 1000 * t) }
      // A 220 Hz saw from 1 s.
      if t > 1 { for k in 1...12 { x += 0.05 / Double(k) * sin(2 * .pi * 220 * Double(k) * t) } }
      // An 880 Hz note with ±20 cent vibrato from 2 s.
      if t > 2 {
        let phase =
          2 * .pi * 880 * t + 880 * (pow(2, 20.0 / 1200) - 1) / 5.5 * sin(2 * .pi * 5.5 * t)
        x += 0.08 * sin(phase)
      }
      // DTMF keys of 100 ms every 200 ms from 3 s.
      if t > 3 && (t - 3).truncatingRemainder(dividingBy: 0.2) < 0.1 {
        x += 0.05 * (sin(2 * .pi * 770 * t) + sin(2 * .pi * 1336 * t))
      }
      return x
    }
    let input = Self.sum(music, Self.noise(count: count, level: -70, seed: 2))
    let (output, events) = Self.run(input, makeGuard())
    #expect(events.isEmpty, "\(events)")
    #expect(output == input)
  }

  /// With the gain steady (from the start, and 3 s after a rise), a howl
  /// must grow steadily for a second (`steadyGrowthSpan`): one growing 40 dB/s from a room
  /// that changed is notched once it has, while an organ chord swelling
  /// 25 dB/s over 1.5 s (every partial of its notes rising together) and
  /// notes struck and held are left alone, bit for bit.
  @Test func aSettledGuardWaitsForSteadyGrowthAndLeavesSwellsAlone() throws {
    let count = Int(4 * Self.rate)
    let noise = Self.noise(count: count, level: -70, seed: 9)
    let howl = Self.sum(
      noise, Self.howl(2500, start: 1, end: 4, level: -75, growth: 40, count: count))
    let events = Self.run(howl, makeGuard()).events
    let first = try #require(events.first)
    #expect(first.action == .notch && abs(first.frequency - 2500) < 10)
    #expect(first.time > 1.5 && first.time < 2.6, "found at \(first.time) s")
    let swell = Self.sum(
      noise,
      Self.signal(count: count) { t in
        // Three organ notes, 8 partials each, swelling from 0.5 s to 2 s.
        guard t > 0.3 else { return 0 }
        let level = -45 + 25 * min(1, max(0, (t - 0.5) / 1.5))
        var x = 0.0
        for root in [261.6, 329.6, 392.0] {
          for k in 1...8 { x += sin(2 * .pi * root * Double(k) * t) / Double(k) }
        }
        return pow(10, level / 20) * x
      })
    let (output, swellEvents) = Self.run(swell, makeGuard())
    #expect(swellEvents.isEmpty, "\(swellEvents)")
    #expect(output == swell)
  }

  @Test func severalHowlsAtOnceDuckAndTheDuckComesBack() throws {
    let count = Int(7 * Self.rate)
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 3),
      Self.howl(1500, start: 0.3, end: 1.2, level: -65, growth: 100, count: count),
      Self.howl(2600, start: 0.3, end: 1.2, level: -65, growth: 100, count: count),
      Self.howl(3900, start: 0.3, end: 1.2, level: -65, growth: 100, count: count))
    // The gain rose just before: howls are judged over the short spans.
    let (_, events) = Self.run(input, makeGuard()) { $0 < 0.25 ? -6 : 0 }
    #expect(events.filter { $0.action == .notch }.count >= 2)
    let duck = try #require(events.first { $0.action == .duck })
    #expect(duck.isDuck && duck.depth == -6)
    // Held 2 s after its last step, then 3 dB back every 0.5 s.
    let lastDuck = try #require(events.last { $0.action == .duck })
    let back = try #require(events.last { $0.isDuck && $0.action == .lift })
    #expect(back.depth == 0)
    #expect(back.time >= lastDuck.time + 2 + 0.5 * (-lastDuck.depth / 3 - 1))
  }

  /// A loop the guard holds down was past its limit lately: while a notch
  /// is in nothing settles, and a howl coming back 3.5 s after the gain
  /// rose is caught as quickly as one right after the rise (settled, half a
  /// second of growth would pass unnoticed).
  @Test func aGuardHoldingANotchDoesNotSettle() throws {
    var settings = HowlGuardSettings()
    settings.liftDelay = 10
    let count = Int(5 * Self.rate)
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 5),
      Self.howl(2500, start: 0.3, end: 0.9, level: -70, growth: 80, count: count),
      Self.howl(3300, start: 3.8, end: 4.3, level: -70, growth: 80, count: count))
    let (_, events) = Self.run(input, makeGuard(settings)) { $0 < 0.25 ? -6 : 0 }
    let notches = events.filter { $0.action == .notch }
    #expect(notches.contains { abs($0.frequency - 2500) < 30 }, "\(events)")
    #expect(notches.contains { abs($0.frequency - 3300) < 30 && $0.time < 4.3 }, "\(events)")
  }

  @Test func aQuietNotchIsLiftedInStepsAndTheOutputIsUntouchedAgain() throws {
    var settings = HowlGuardSettings()
    settings.liftDelay = 1
    settings.liftInterval = 0.25
    let count = Int(5 * Self.rate)
    // A howl grows until it is stopped: longer than the settled guard's
    // span of steady growth.
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 4),
      Self.howl(2500, start: 0.3, end: 1.4, level: -70, growth: 50, count: count))
    let howlGuard = makeGuard(settings)
    let (output, events) = Self.run(input, howlGuard)
    let notch = try #require(events.first { $0.action == .notch })
    let deepest = events.filter { !$0.isDuck && $0.action != .lift }.map(\.depth).min() ?? 0
    let lifts = events.filter { $0.action == .lift && !$0.isDuck }
    #expect(lifts.count == Int(-deepest / settings.liftStep))
    let gone = try #require(lifts.last)
    #expect(gone.depth == 0 && gone.time >= notch.time + 1)
    #expect(howlGuard.isIdle)
    // From a ramp's length after the last lift, every sample is the input's.
    let from = Int((gone.time + 0.01) * Self.rate)
    #expect(Array(output[from...]) == Array(input[from...]))
  }

  /// Notches, deepening, the duck and lifts on the audio thread: not one
  /// allocation. Another guard rehearses the same signal first: what the
  /// Swift runtime sets up once per process on a path's first run (the
  /// guard's own warm-up covers the paths it can reach alone) must not be
  /// counted against the guard watched.
  @Test func guardingNeverAllocates() {
    var settings = HowlGuardSettings()
    settings.liftDelay = 0.5
    settings.liftInterval = 0.1
    settings.duckHold = 0.3
    let count = Int(4 * Self.rate)
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 5),
      Self.howl(1500, start: 0.3, end: 1.5, level: -65, growth: 100, count: count),
      Self.howl(2600, start: 0.3, end: 1.5, level: -65, growth: 100, count: count),
      Self.howl(3900, start: 0.3, end: 1.5, level: -65, growth: 100, count: count))
    // The gain raised 6 dB at 0.25 s: the short span in use as the howls grow.
    let gain = { (start: Int) in start < Int(0.25 * Self.rate) ? -6.0 : 0 }
    _ = Self.allocations(input, makeGuard(settings), watching: false, gain: gain)
    var actions = (notch: 0, deepen: 0, duck: 0, lift: 0)
    let allocations = Self.allocations(input, makeGuard(settings), watching: true, gain: gain) {
      event in
      switch event.action {
      case .notch: actions.notch += 1
      case .deepen: actions.deepen += 1
      case .duck: actions.duck += 1
      case .lift: actions.lift += 1
      }
    }
    #expect(actions.notch >= 2 && actions.duck >= 1 && actions.lift >= 2)
    #expect(allocations == 0)
  }

  /// With the loop's response known, the notches a gain needs go in during
  /// the period the gain gets there; until then the output is untouched.
  @Test func aRingOutPlanNotchesAheadAsTheGainRises() throws {
    let plan = try Self.ringOut("living")
    let howlGuard = HowlGuard(
      sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256, ringOut: plan)
    let count = Int(Self.rate)
    let input = Self.noise(count: count, level: -40, seed: 9)
    let step = 0.5
    let high = plan.maximumStableGain + 3
    let (output, events) = Self.run(input, howlGuard) {
      $0 < step ? plan.maximumStableGain - 8 : high
    }
    let before = Int(step * Self.rate)
    #expect(Array(output[..<before]) == Array(input[..<before]))
    let planned = try #require(plan.step(at: high))
    let notches = events.filter { $0.action == .notch }
    #expect(notches.count == plan.notchCount(planned))
    // The first period at the high gain: the notches are set for its own samples.
    let periodStart = (step * Self.rate / 256).rounded(.up) * 256
    let periodEnd = (periodStart + 256) / Self.rate
    #expect(notches.allSatisfy { $0.isPlanned && abs($0.time - periodEnd) < 1e-9 })
    #expect(howlGuard.bank.activeCount == plan.notchCount(planned))
    #expect(howlGuard.bank.response(at: plan.frequency) < -2)
  }

  /// A rise the ring-out plan covers leaves the loop under its limit as
  /// measured: it does not bring in the short span (what a stable loop
  /// builds up after a rise grows steeply, then settles). A howl the plan
  /// did not foresee is still caught, by the ordinary tests.
  @Test func aRiseTheRingOutPlanCoversIsNoAlarm() throws {
    let plan = try Self.ringOut("hall")
    let count = Int(1.5 * Self.rate)
    let input = Self.sum(
      Self.noise(count: count, level: -60, seed: 3),
      Self.howl(500, start: 0.5, end: 1.5, level: -66, growth: 200, count: count))
    let low = plan.firstGain - 6
    let gain = { (time: Double) in time < 0.45 ? low : low + 6 }
    let alarmed = try #require(Self.run(input, makeGuard(), gain: gain).events.first)
    let planned = HowlGuard(
      sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256, ringOut: plan)
    #expect(plan.covers(low + 6))
    let calm = try #require(Self.run(input, planned, gain: gain).events.first)
    #expect(!calm.isPlanned && abs(calm.frequency - 500) < 10)
    #expect(
      calm.time >= alarmed.time + 0.02, "covered at \(calm.time) s, alarmed at \(alarmed.time) s")
  }

  /// Setting, keeping and setting again a plan's notches as the gain goes
  /// up and down: not one allocation.
  @Test func guardingWithARingOutPlanNeverAllocates() throws {
    let plan = try Self.ringOut("office")
    let count = Int(2 * Self.rate)
    let input = Self.noise(count: count, level: -50, seed: 3)
    let limit = plan.maximumStableGain
    func gain(_ start: Int) -> Double {
      let t = Double(start) / Self.rate
      return t < 0.3 ? limit - 8 : t < 0.8 ? limit + 2 : t < 1.2 ? limit - 9 : limit + 8
    }
    func makeGuard() -> HowlGuard {
      HowlGuard(sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256, ringOut: plan)
    }
    _ = Self.allocations(input, makeGuard(), watching: false, gain: gain)
    var planned = 0
    let allocations = Self.allocations(input, makeGuard(), watching: true, gain: gain) {
      if $0.isPlanned { planned += 1 }
    }
    #expect(planned >= 2)
    #expect(allocations == 0)
  }

  /// A learned plan acts only when the gain jumps: eased up 1 dB a second
  /// past where the plan starts, the output stays untouched; a jump of
  /// 6 dB brings the notches in during the first period at the new gain.
  @Test func aLearnedPlanActsOnlyWhenTheGainJumps() throws {
    let plan = try Self.ringOut("living")
    let howlGuard = HowlGuard(
      sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256, learns: true)
    howlGuard.offerLearnedPlan(plan)
    let count = Int(6 * Self.rate)
    let input = [Float](repeating: 0, count: count)
    let start = plan.firstGain - 3
    let (_, eased) = Self.run(input, howlGuard) { start + $0 }
    #expect(eased.isEmpty, "acted while eased up: \(eased.first!)")
    let low = plan.firstGain - 3
    let jump = 1.0
    let again = HowlGuard(
      sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256, learns: true)
    again.offerLearnedPlan(plan)
    let (_, events) = Self.run(Array(input[..<Int(2 * Self.rate)]), again) {
      $0 < jump ? low : low + 6
    }
    let first = try #require(events.first)
    #expect(first.isPlanned && first.isLearned)
    // Stamped at the end of the first period at the new gain.
    let periodStart = (jump * Self.rate / 256).rounded(.up) * 256
    #expect(abs(first.time - (periodStart + 256) / Self.rate) < 1e-9, "\(first.time)")
    #expect(again.bank.activeCount == plan.notchCount(try #require(plan.step(at: low + 6))))
  }

  /// Taking up a learned plan and acting on it allocate nothing on the
  /// audio thread (the offers come between periods, as from the control thread).
  @Test func takingUpALearnedPlanNeverAllocates() throws {
    let plan = try Self.ringOut("office")
    let howlGuard = HowlGuard(
      sampleRate: Self.rate, channelCount: 1, maximumFrameCount: 256, learns: true)
    var samples = Self.noise(count: 256 * 40, level: -50, seed: 3)
    var allocations = 0
    samples.withUnsafeMutableBufferPointer { buffer in
      for period in 0..<40 {
        if period % 10 == 0 { howlGuard.offerLearnedPlan(plan) }
        allocation_counter_watch_current_thread(1)
        howlGuard.process(
          buffer.baseAddress! + 256 * period, frameCount: 256,
          time: Double(256 * period) / Self.rate,
          gainDecibels: plan.firstGain - 3 + (period >= 20 ? 8 : 0)
        ) { _ in }
        allocations += allocation_counter_thread_count()
        allocation_counter_watch_current_thread(0)
      }
    }
    howlGuard.releaseRetiredPlan()
    #expect(allocations == 0)
    #expect(howlGuard.bank.activeCount > 0)
  }
}
