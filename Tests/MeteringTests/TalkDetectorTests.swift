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

  @Test func burstInNoiseIsOneSegmentAtTheRightTime() {
    let rate = 8_000.0
    var detector = TalkDetector(settings: TalkDetectorSettings(), envelopeRate: rate)
    let settings = TalkDetectorSettings()
    var follower = EnvelopeFollower(
      attackTime: settings.attackTime, releaseTime: settings.releaseTime, sampleRate: rate)
    var generator = SplitMix(seed: 21)
    var envelope = [Float]()
    for n in 0..<Int(6 * rate) {
      let noise = Float.random(in: -0.01...0.01, using: &generator)
      let t = Double(n) / rate
      let tone: Float = (t >= 3 && t < 4) ? Float(0.2 * sin(2 * Double.pi * 500 * t)) : 0
      envelope.append(follower.process(noise + tone))
    }
    var transitions = [TalkTransition]()
    envelope.withUnsafeBufferPointer { detector.process($0) { transitions.append($0) } }
    #expect(transitions.count == 2)
    #expect(transitions.first?.isStart == true)
    #expect(abs(Double(transitions[0].position) / rate - 3) < 0.01)
    // The end is where the envelope fell below the close threshold: after
    // the burst, within the release time times ln(burst / noise envelope).
    let end = Double(transitions[1].position) / rate
    #expect(end > 4 && end < 4 + settings.releaseTime * log(0.2 / 0.005))
    #expect(!detector.isTalking)
  }

  @Test func absoluteThresholdsIgnoreTheFloor() {
    var settings = TalkDetectorSettings()
    settings.isAbsolute = true
    settings.openThreshold = -20
    settings.closeThreshold = -30
    var detector = TalkDetector(settings: settings, envelopeRate: 1000)
    var transitions = [TalkTransition]()
    let levels = [Float](repeating: 0.2, count: 100) + [Float](repeating: 0.01, count: 1000)
    levels.withUnsafeBufferPointer { detector.process($0) { transitions.append($0) } }
    #expect(transitions.map(\.isStart) == [true, false])
    #expect(transitions[1].position == 100)
  }

  /// Talk may lift the background by `freeRise` at once, then by
  /// `riseRate` a second after `heldSeconds`; a steady level passes at once.
  @Test func heldBackgroundRisesOnlyAsFastAsAllowed() {
    var held = HeldBackground()
    _ = held.update(window: (-60, 2), talkSeconds: nil, steadyLevel: nil)
    let first = held.update(window: (-30, 20), talkSeconds: 0, steadyLevel: nil)
    #expect(first.background == -60 + HeldBackground.freeRise)
    #expect(first.spread == 2 + HeldBackground.freeRise)
    let seconds = HeldBackground.heldSeconds + 3
    let later = held.update(window: (-30, 20), talkSeconds: seconds, steadyLevel: nil)
    let expected = -60 + HeldBackground.freeRise + 3 * HeldBackground.riseRate
    #expect(abs(later.background - expected) < 1e-9)
    let spread = 2 + HeldBackground.freeRise + 3 * HeldBackground.spreadRiseRate
    #expect(abs(later.spread - spread) < 1e-9)
    // A window below the held value is taken as it is.
    #expect(held.update(window: (-65, 1), talkSeconds: 8, steadyLevel: nil).background == -65)
    // A steady new noise is background at once.
    #expect(held.update(window: (-30, 20), talkSeconds: 1, steadyLevel: -40).background == -40)
    // Closed: the window as it is.
    #expect(held.update(window: (-30, 20), talkSeconds: nil, steadyLevel: nil) == (-30, 20))
  }
}
