import FeedbackControl
import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct RingOutPlanTests {
  static let rate = 48_000.0
  /// micloop loopback's own buffering, which the committed rooms leave out.
  static let buffering = 768

  static func plan(_ room: String, _ settings: HowlGuardSettings = HowlGuardSettings()) throws
    -> (plan: RingOutPlan, response: [Float])
  {
    let response = try RoomFixtures.response(room)
    let plan = try #require(
      RingOutPlan(
        impulseResponse: response, sampleRate: rate, delay: buffering, settings: settings))
    return (plan, response)
  }

  /// The plan is checked against the loop it makes, found another way:
  /// the room's response (with the buffering) filtered in the time domain
  /// by a `NotchBank` holding the step's notches, then read by
  /// `LoopStability`. Every step from the loop's limit to 9 dB past it
  /// keeps `ringOutMargin` (less the grid's rounding) once its duck is
  /// counted.
  @Test(.slow, arguments: RoomFixtures.names)
  func thePlannedNotchesKeepTheLoopUnderItsLimit(room: String) throws {
    let settings = HowlGuardSettings()
    let (plan, response) = try Self.plan(room, settings)
    for over in [0.0, 3, 6, 9] {
      let gain = plan.maximumStableGain + over
      let step = try #require(plan.step(at: gain))
      let bank = NotchBank(
        capacity: settings.notchCount, channelCount: 1, sampleRate: Self.rate,
        quality: settings.notchQuality, rampDuration: 0.001)
      for index in 0..<plan.notchCount(step) {
        let notch = plan.notch(index, ofStep: step)
        bank.place(index, frequency: notch.frequency, depth: notch.depth)
      }
      var ramp = [Float](repeating: 0, count: 256)
      ramp.withUnsafeMutableBufferPointer { bank.process($0.baseAddress!, frameCount: 256) }
      var loop =
        [Float](repeating: 0, count: Self.buffering) + response
        + [Float](repeating: 0, count: 4800)
      loop.withUnsafeMutableBufferPointer { bank.process($0.baseAddress!, frameCount: $0.count) }
      let notched = try #require(
        LoopStability.analyze(impulseResponse: loop, sampleRate: Self.rate))
      let margin = notched.maximumStableGain - (gain - plan.duck(ofStep: step))
      #expect(
        margin >= settings.ringOutMargin - settings.ringOutGainStep - 0.2,
        "\(room) at MSG +\(over) dB: \(margin) dB under the limit with \(plan.notchCount(step)) notches"
      )
    }
  }

  @Test(arguments: RoomFixtures.names)
  func aHigherGainKeepsEveryNotchOfALowerOne(room: String) throws {
    let (plan, _) = try Self.plan(room)
    for step in 1..<plan.stepCount {
      #expect(plan.notchCount(step) >= plan.notchCount(step - 1))
      for index in 0..<plan.notchCount(step - 1) {
        let before = plan.notch(index, ofStep: step - 1)
        let after = plan.notch(index, ofStep: step)
        #expect(after.frequency == before.frequency && after.depth >= before.depth)
      }
    }
  }

  /// Nothing is planned until the gain comes within the margin of the
  /// limit; the limit is the loop's own (`LoopStability`'s).
  @Test func thePlanStartsAtItsMarginUnderTheLimit() throws {
    let settings = HowlGuardSettings()
    let (plan, response) = try Self.plan("living", settings)
    let stability = try #require(
      LoopStability.analyze(impulseResponse: response, sampleRate: Self.rate, delay: Self.buffering)
    )
    #expect(abs(plan.maximumStableGain - stability.maximumStableGain) < 1e-9)
    #expect(plan.frequency == stability.frequency)
    #expect(plan.step(at: stability.maximumStableGain - 6) == nil)
    #expect(plan.step(at: stability.maximumStableGain - settings.ringOutMargin) == 0)
    #expect(plan.notchCount(0) == 0 && plan.duck(ofStep: 0) == 0)
    let atLimit = try #require(plan.step(at: stability.maximumStableGain))
    #expect(plan.notchCount(atLimit) >= 1)
    let first = plan.notch(0, ofStep: try #require(plan.step(at: stability.maximumStableGain - 4)))
    #expect(abs(first.frequency - stability.frequency) < 1)
  }

  /// Past the bank's size the rest is the duck's: at the top of the plan
  /// a full bank and a duck.
  @Test func pastTheBanksSizeTheOutputIsDucked() throws {
    var settings = HowlGuardSettings()
    settings.notchCount = 2
    let (plan, _) = try Self.plan("hall", settings)
    let top = plan.stepCount - 1
    #expect(plan.notchCount(top) == 2)
    #expect(plan.duck(ofStep: top) > 0)
  }

  @Test func aSilentResponseHasNoPlan() {
    #expect(
      RingOutPlan(
        impulseResponse: [Float](repeating: 0, count: 100), sampleRate: Self.rate,
        settings: HowlGuardSettings()) == nil)
  }
}
