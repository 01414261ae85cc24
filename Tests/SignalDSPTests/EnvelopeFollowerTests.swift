import Foundation
import SignalDSP
import Testing

@Suite struct EnvelopeFollowerTests {
  let rate = 48_000.0

  @Test func stepReaches63PercentAfterOneAttackTime() {
    let attack = 0.010
    var follower = EnvelopeFollower(attackTime: attack, releaseTime: 0.5, sampleRate: rate)
    var value: Float = 0
    for _ in 0..<Int(attack * rate) { value = follower.process(1) }
    #expect(abs(value - Float(1 - exp(-1.0))) < 1e-4)
  }

  @Test func fallsTo37PercentAfterOneReleaseTime() {
    let release = 0.080
    var follower = EnvelopeFollower(
      attackTime: 0, releaseTime: release, sampleRate: rate, initialValue: 1)
    var value: Float = 1
    for _ in 0..<Int(release * rate) { value = follower.process(0) }
    #expect(abs(value - Float(exp(-1.0))) < 1e-4)
  }

  @Test func rectifiesNegativeInput() {
    var follower = EnvelopeFollower(attackTime: 0, releaseTime: 0, sampleRate: rate)
    #expect(follower.process(-0.5) == 0.5)
  }

  @Test func coefficientMatchesDefinition() {
    #expect(onePoleCoefficient(time: 0.01, sampleRate: 48_000) == Float(exp(-1 / 480.0)))
    #expect(onePoleCoefficient(time: 0, sampleRate: 48_000) == 0)
  }
}
