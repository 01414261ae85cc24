import Foundation
import SignalDSP
import Testing

@Suite struct RampedParameterTests {
  @Test func rampEndsExactlyAtTarget() {
    let gain = RampedParameter(value: 1, rampFrames: 480)
    gain.set(Float(Decibels.amplitude(-6)))
    var ones = [Float](repeating: 1, count: 1000)
    ones.withUnsafeMutableBufferPointer {
      gain.scale($0.baseAddress!, frameCount: 1000, channelCount: 1)
    }
    let target = Float(Decibels.amplitude(-6))
    #expect(ones[479] == target)
    #expect(ones[999] == target)
    #expect(gain.current == target)
    // Strictly between the two values during the ramp: no jump.
    #expect(ones[0] < 1 && ones[0] > target)
    for i in 1..<480 { #expect(ones[i] <= ones[i - 1]) }
  }

  @Test func rampContinuesAcrossBlocks() {
    let gain = RampedParameter(value: 0, rampFrames: 100)
    gain.set(0.5)
    var out = [Float]()
    for _ in 0..<7 {
      var block = [Float](repeating: 1, count: 33)
      block.withUnsafeMutableBufferPointer {
        gain.scale($0.baseAddress!, frameCount: 33, channelCount: 1)
      }
      out += block
    }
    #expect(out[99] == 0.5)
    #expect(abs(out[49] - 0.25) < 1e-6)
    #expect(out[230] == 0.5)
  }

  @Test func interleavedChannelsShareEachFrameValue() {
    let gain = RampedParameter(value: 1, rampFrames: 10)
    gain.set(0)
    var stereo = [Float](repeating: 1, count: 40)
    stereo.withUnsafeMutableBufferPointer {
      gain.scale($0.baseAddress!, frameCount: 20, channelCount: 2)
    }
    for frame in 0..<20 { #expect(stereo[2 * frame] == stereo[2 * frame + 1]) }
    #expect(stereo[2 * 9] == 0)
    #expect(abs(stereo[0] - 0.9) < 1e-6)
  }

  @Test func aValueSetFromAnotherThreadIsPickedUpOnce() async {
    let gain = RampedParameter(value: 1, rampFrames: 0)
    await Task.detached { gain.set(0.25) }.value
    #expect(gain.requestedValue == 0.25)
    #expect(gain.current == 1)
    gain.update()
    #expect(gain.current == 0.25)
    #expect(gain.next() == 0.25)
    #expect(!gain.isRamping)
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
