import FeedbackControl
import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct LoopStabilityTests {
  let rate = 48_000.0

  @Test func aDelayWithGainTakesTheInverseGain() throws {
    var response = [Float](repeating: 0, count: 1000)
    response[700] = 0.5
    let stability = try #require(LoopStability.analyze(impulseResponse: response, sampleRate: rate))
    #expect(abs(stability.maximumStableGain - 6.02) < 0.01)
  }

  /// Two paths add up where both arrive in phase: every 480 Hz for 100 and 300 samples.
  @Test func twoPathsHowlWhereTheyArriveInPhase() throws {
    var response = [Float](repeating: 0, count: 400)
    response[100] = 0.3
    response[300] = 0.2
    let stability = try #require(LoopStability.analyze(impulseResponse: response, sampleRate: rate))
    #expect(abs(stability.maximumStableGain - -20 * log10(0.5)) < 0.02)
    let multiple = stability.frequency / 480
    #expect(abs(multiple - multiple.rounded()) < 0.01)
  }

  /// An inverted path rings where its phase has turned half a cycle.
  @Test func anInvertedPathHowlsHalfwayBetweenItsCombsTeeth() throws {
    var response = [Float](repeating: 0, count: 200)
    response[96] = -0.25
    let stability = try #require(
      LoopStability.analyze(impulseResponse: response, sampleRate: rate, delay: 4))
    #expect(abs(stability.maximumStableGain - 12.04) < 0.01)
    let turns = stability.frequency * 100 / rate
    #expect(abs(turns - turns.rounded(.down) - 0.5) < 0.01)
  }

  @Test func aSilentLoopHasNoLimit() {
    #expect(LoopStability.analyze(impulseResponse: [0, 0, 0], sampleRate: rate) == nil)
  }

  /// The committed rooms, after micloop loopback's 768 frames of buffering,
  /// as Scripts/eval/room_impulse_responses.py reports them.
  @Test(arguments: [("living", 3.35, 3164.0), ("office", 5.10, 2292.0), ("hall", 9.12, 2151.0)])
  func theRoomsHaveTheirPublishedLimits(room: String, gain: Double, frequency: Double) throws {
    let response = try RoomFixtures.response(room)
    let stability = try #require(
      LoopStability.analyze(impulseResponse: response, sampleRate: rate, delay: 768))
    #expect(abs(stability.maximumStableGain - gain) < 0.05)
    #expect(abs(stability.frequency - frequency) < 2)
  }
}
