import Foundation
import SignalDSP
import Testing

@Suite struct GainRampTests {
  @Test func rampEndsExactlyAtTarget() {
    var gain = GainRamp(gain: 1, rampSamples: 480)
    gain.setTarget(decibels: -6)
    var ones = [Float](repeating: 1, count: 1000)
    ones.withUnsafeMutableBufferPointer { gain.process($0) }
    let target = Float(Decibels.amplitude(-6))
    #expect(ones[479] == target)
    #expect(ones[999] == target)
    #expect(gain.current == target)
    // Strictly between the two gains during the ramp: no jump.
    #expect(ones[0] < 1 && ones[0] > target)
    for i in 1..<480 { #expect(ones[i] <= ones[i - 1]) }
  }

  @Test func rampContinuesAcrossBlocks() {
    var gain = GainRamp(gain: 0, rampSamples: 100)
    gain.setTarget(0.5)
    var out = [Float]()
    for _ in 0..<7 {
      var block = [Float](repeating: 1, count: 33)
      block.withUnsafeMutableBufferPointer { gain.process($0) }
      out += block
    }
    #expect(out[99] == 0.5)
    #expect(abs(out[49] - 0.25) < 1e-6)
  }

  @Test func softLimitNeverReachesFullScale() {
    for x in stride(from: -20.0, through: 20.0, by: 0.01) {
      let y = SoftLimiter.limit(Float(x))
      #expect(abs(y) <= 1)
      if abs(x) <= Double(SoftLimiter.knee) { #expect(y == Float(x)) }
    }
    #expect(SoftLimiter.limit(.nan) == 0)
    #expect(SoftLimiter.limit(.infinity) == 1)
  }

  @Test func limiterIsMonotonic() {
    var previous = SoftLimiter.limit(0)
    for x in stride(from: 0.0, through: 6.0, by: 0.001) {
      let y = SoftLimiter.limit(Float(x))
      #expect(y >= previous)
      previous = y
    }
  }
}
