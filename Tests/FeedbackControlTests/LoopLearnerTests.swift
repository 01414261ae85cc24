import Foundation
import SignalDSP
import TestSupport
import Testing

@testable import FeedbackControl

/// Learning a loop from what it plays and hears: the least-squares
/// response, the whitening that keeps a talker from being taken for the
/// loop, Levinson's recursion in budgeted steps, and the plan that trusts
/// only what a running loop can be.
@Suite struct LoopLearnerTests {
  static let rate = 48_000.0
  /// The band the guard plans in, which the learner keeps.
  static let band = HowlGuardSettings().learnedHighest

  /// Feeds `learner` in 256-frame periods and solves to the end.
  static func learn(_ learner: LoopLearner, played: [Float], heard: [Float]) -> [Float]? {
    for start in stride(from: 0, to: played.count, by: 256) {
      let count = min(256, played.count - start)
      played.withUnsafeBufferPointer { p in
        heard.withUnsafeBufferPointer { h in
          learner.append(
            played: p.baseAddress! + start, heard: h.baseAddress! + start, count: count)
        }
      }
    }
    for _ in 0..<10_000 {
      if let response = learner.solve(orders: 500) { return response }
    }
    return nil
  }

  /// An open path (white noise played, heard 900 frames later at half
  /// level) is learned at its lag and, within 10 %, its level (the
  /// whitening predictor changes between the frame heard and the frame
  /// played 900 frames before it).
  @Test func anEchoIsLearnedAtItsLagAndLevel() throws {
    var noise = SplitMix(seed: 4)
    let played = (0..<Int(3 * Self.rate)).map { _ in Float.random(in: -0.1...0.1, using: &noise) }
    let heard = (0..<played.count).map { $0 >= 900 ? 0.5 * played[$0 - 900] : 0 }
    let learner = LoopLearner(length: 2048, delay: 256, sampleRate: Self.rate, band: Self.band)
    let response = try #require(Self.learn(learner, played: played, heard: heard))
    #expect(learner.decimation == 2 && learner.responseRate == Self.rate / 2)
    #expect(response.count == 1024)
    let peak = response.indices.max { abs(response[$0]) < abs(response[$1]) }!
    #expect((peak + learner.delay) * learner.decimation == 900)
    #expect(abs(response[peak] - 0.5) < 0.05, "\(response[peak])")
    let rest = response.enumerated().filter { $0.offset != peak }.map { abs($0.element) }.max()!
    #expect(rest < 0.02, "largest elsewhere \(rest)")
  }

  /// The learner keeps the band plans act in and no more: the lowest
  /// whole fraction of the rate at least 2.5 times it (none where the
  /// stream is already that low), the lags scaled to match.
  @Test func theLearnedBandSetsTheResponseRate() {
    for (rate, factor) in [(48_000.0, 2), (44_100, 2), (96_000, 4), (32_000, 1), (16_000, 1)] {
      let learner = LoopLearner(
        length: 4_800, delay: 48, sampleRate: rate, band: Self.band)
      #expect(learner.decimation == factor, "\(rate)")
      #expect(factor == 1 || learner.responseRate >= LoopLearner.leastRateOverBand * Self.band)
      #expect(learner.length == (4_800 + factor - 1) / factor)
      #expect(learner.delay == 48 / factor)
    }
  }

  /// A closed loop — what is heard is played again 16 ms later, amplified
  /// to 6 dB under the loop's limit — is learned well enough to read its
  /// limit within 2.5 dB, and on the safe side (the loop no weaker than it is).
  @Test func aRunningLoopIsLearnedFromWhatItPlaysAndHears() throws {
    // Echoes of the speaker at the microphone: 768 frames of buffering, then a room.
    let echoes: [(lag: Int, gain: Float)] = [(768 + 120, 0.5), (768 + 410, -0.3), (768 + 900, 0.2)]
    var response = [Float](repeating: 0, count: 2048)
    for echo in echoes { response[echo.lag] = echo.gain }
    let limit = try #require(
      LoopStability.analyze(impulseResponse: response, sampleRate: Self.rate)
    ).maximumStableGain
    let gain = Float(Decibels.amplitude(limit - 6))
    var noise = SplitMix(seed: 8)
    let count = Int(4 * Self.rate)
    var heard = [Float](repeating: 0, count: count)
    var played = [Float](repeating: 0, count: count)
    for n in 0..<count {
      var sample = Float.random(in: -0.01...0.01, using: &noise)
      for echo in echoes where n >= echo.lag { sample += echo.gain * played[n - echo.lag] }
      heard[n] = sample
      played[n] = gain * sample
    }
    let learner = LoopLearner(length: 2048, delay: 256, sampleRate: Self.rate, band: Self.band)
    let learned = try #require(Self.learn(learner, played: played, heard: heard))
    let estimate = try #require(
      LoopStability.analyze(
        impulseResponse: learned, sampleRate: learner.responseRate, delay: learner.delay)
    ).maximumStableGain
    #expect(estimate <= limit + 0.5 && estimate >= limit - 2.5, "\(estimate) for \(limit)")
  }

  /// The recursion solves a Toeplitz system, a budget of orders at a time.
  @Test func levinsonSolvesInSteps() throws {
    let column = [4.0, 1.5, 0.5, -0.25, 0.1]
    let rightSide = [1.0, 2.0, -1.0, 0.5, 3.0]
    var solver = ToeplitzSolver(column: column, rightSide: rightSide)
    var steps = 0
    var solution: [Double]?
    while solution == nil {
      if let done = solver.advance(orders: 1) { solution = try #require(done) }
      steps += 1
    }
    #expect(steps == 4)
    let x = try #require(solution)
    for row in 0..<5 {
      let product = (0..<5).map { column[abs(row - $0)] * x[$0] }.reduce(0, +)
      #expect(abs(product - rightSide[row]) < 1e-9)
    }
  }

  /// The processor's wide vectors, where it has them, solve exactly as
  /// the portable code does: every element of the solution, bit for bit.
  @Test func wideVectorsSolveExactlyAsThePortableCode() throws {
    var random = SplitMix(seed: 11)
    let count = 1_003
    var column = (0..<count).map { _ in Double.random(in: -0.05...0.05, using: &random) }
    column[0] = 4
    let rightSide = (0..<count).map { _ in Double.random(in: -1...1, using: &random) }
    func solve(wide: Bool) throws -> [Double] {
      var solver = ToeplitzSolver(column: column, rightSide: rightSide, allowsWideVectors: wide)
      while true {
        if let done = solver.advance(orders: 97) { return try #require(done) }
      }
    }
    let wide = try solve(wide: true)
    let portable = try solve(wide: false)
    #expect(wide.count == count)
    #expect(zip(wide, portable).allSatisfy { $0.bitPattern == $1.bitPattern })
  }

  /// A learned crossing within `learnedPlausibility` of its limit at the
  /// gain the loop runs at would ring: it is left out, and with nothing
  /// else to plan for there is no plan. A plausible loop is planned from
  /// `learnedMargin` under its limit.
  @Test func onlyAPlausibleLoopIsPlanned() throws {
    let settings = HowlGuardSettings()
    var response = [Float](repeating: 0, count: 1024)
    response[300] = 0.25
    let limit = -20 * log10(0.25)
    var transform: RealFourierTransform?
    let plan = try #require(
      LearnedLoop.plan(
        impulseResponse: response, delay: 256, minimumDelay: 256, sampleRate: Self.rate,
        gainDecibels: limit - 6,
        settings: settings, transform: &transform))
    #expect(abs(plan.maximumStableGain - limit) < 0.1)
    #expect(abs(plan.firstGain - (limit - settings.learnedMargin)) < 0.1)
    #expect(
      LearnedLoop.plan(
        impulseResponse: response, delay: 256, minimumDelay: 256, sampleRate: Self.rate,
        gainDecibels: limit - 1,
        settings: settings, transform: &transform) == nil)
  }
}
