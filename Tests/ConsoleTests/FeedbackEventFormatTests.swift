import Console
import FeedbackControl
import Foundation
import SignalDSP
import Testing

@Suite struct FeedbackEventFormatTests {
  @Test func aNotchIsOneJSONObjectWithItsFrequencyDepthAndAction() throws {
    let event = HowlGuardEvent(
      action: .notch, time: 2.16, frequency: 2427.04, depth: -12, growth: 87.4)
    let line = FeedbackEventFormat.json(event)
    #expect(
      line
        == #"{"event":"feedback","time":2.160,"frequency":2427.0,"depth_db":-12.0,"action":"notch","growth_db_per_s":87}"#
    )
    #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
    #expect(
      FeedbackEventFormat.text(event)
        == "feedback at 2.16 s: notch at 2427 Hz, -12 dB (growing 87 dB/s)")
  }

  @Test func theDuckHasNoFrequencyAndLiftsHaveNoGrowth() {
    let duck = HowlGuardEvent(action: .duck, time: 3, frequency: .nan, depth: -6, growth: 120)
    #expect(
      FeedbackEventFormat.json(duck).contains(#""frequency":null,"depth_db":-6.0,"action":"duck""#))
    #expect(
      FeedbackEventFormat.text(duck)
        == "feedback at 3.00 s: output ducked to -6 dB (growing 120 dB/s)")
    let back = HowlGuardEvent(action: .lift, time: 5.5, frequency: .nan, depth: 0, growth: .nan)
    #expect(!FeedbackEventFormat.json(back).contains("growth"))
    #expect(FeedbackEventFormat.text(back) == "feedback at 5.50 s: duck lifted")
    let eased = HowlGuardEvent(action: .lift, time: 70, frequency: 2427, depth: -9, growth: .nan)
    #expect(
      FeedbackEventFormat.text(eased) == "feedback at 70.00 s: notch at 2427 Hz eased to -9 dB")
    let deeper = HowlGuardEvent(action: .deepen, time: 1, frequency: 3164, depth: -15, growth: 40)
    #expect(FeedbackEventFormat.text(deeper).contains("notch at 3164 Hz deepened to -15 dB"))
  }

  @Test func plannedActionsSayTheyCameFromTheRingOut() throws {
    let event = HowlGuardEvent(
      action: .notch, time: 2.0, frequency: 3164, depth: -6, growth: .nan, isPlanned: true)
    let line = FeedbackEventFormat.json(event)
    #expect(line.hasSuffix(#""action":"notch","planned":true}"#), "\(line)")
    #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
    #expect(
      FeedbackEventFormat.text(event) == "feedback at 2.00 s: notch at 3164 Hz, -6 dB (ring-out)")
    let found = HowlGuardEvent(action: .notch, time: 1, frequency: 500, depth: -9, growth: 30)
    #expect(!FeedbackEventFormat.json(found).contains("planned"))
    #expect(!FeedbackEventFormat.json(event).contains("learned"))
  }

  @Test func learnedActionsSayTheLoopWasLearned() throws {
    let event = HowlGuardEvent(
      action: .deepen, time: 4.01, frequency: 2178, depth: -6, growth: .nan, isPlanned: true,
      isLearned: true)
    let line = FeedbackEventFormat.json(event)
    #expect(line.hasSuffix(#""action":"deepen","planned":true,"learned":true}"#), "\(line)")
    #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
    #expect(
      FeedbackEventFormat.text(event)
        == "feedback at 4.01 s: notch at 2178 Hz deepened to -6 dB (learned loop)")
  }
}
