import Foundation
import SignalDSP
import Testing

@Suite struct ToneGeneratorTests {
  let rate = 48_000.0

  /// Renders `seconds` in callback-sized chunks of random length.
  func render(_ generator: inout ToneGenerator, seconds: Double, into samples: inout [Float]) {
    var generatorRandom = SystemRandomNumberGenerator()
    var remaining = Int(seconds * rate)
    var chunk = [Float](repeating: 0, count: 1024)
    while remaining > 0 {
      let count = min(remaining, Int.random(in: 1...1024, using: &generatorRandom))
      chunk.withUnsafeMutableBufferPointer { generator.render(into: $0.baseAddress!, count: count) }
      samples += chunk[0..<count]
      remaining -= count
    }
  }

  /// The largest step a sum of sines can take between two samples.
  func maximumStep(_ tones: [(Double, Float)]) -> Float {
    tones.reduce(0) { $0 + $1.1 * Float(2 * sin(Double.pi * $1.0 / rate)) }
  }

  func largestStep(_ samples: ArraySlice<Float>) -> Float {
    var largest: Float = 0
    var previous = samples.first ?? 0
    for sample in samples.dropFirst() {
      largest = max(largest, abs(sample - previous))
      previous = sample
    }
    return largest
  }

  @Test func noDiscontinuityAcrossCallbackBoundaries() {
    var generator = ToneGenerator(sampleRate: rate)
    generator.setTones([(697, 0.4), (1209, 0.4)])
    generator.start()
    var samples = [Float]()
    render(&generator, seconds: 0.5, into: &samples)
    let steady = largestStep(samples[Int(0.01 * rate)...])
    #expect(steady <= maximumStep([(697, 0.4), (1209, 0.4)]) * 1.0001, "step \(steady)")
    // A frequency change while running keeps the phase: the step stays bounded.
    let before = samples.count
    generator.setTones([(770, 0.4), (1336, 0.4)])
    render(&generator, seconds: 0.5, into: &samples)
    let changed = largestStep(samples[(before - 1)...])
    #expect(changed <= maximumStep([(770, 0.4), (1336, 0.4)]) * 1.0001, "step \(changed)")
  }

  @Test func levelChangeRampsInsteadOfJumping() {
    var generator = ToneGenerator(sampleRate: rate)
    generator.setTones([(1000, 0.1)])
    generator.start()
    var samples = [Float]()
    render(&generator, seconds: 0.1, into: &samples)
    let before = samples.count
    generator.setTones([(1000, 0.9)])
    render(&generator, seconds: 0.1, into: &samples)
    #expect(largestStep(samples[(before - 1)...]) <= maximumStep([(1000, 0.9)]) + 0.9 / 240)
    let tail = samples.suffix(4800)
    #expect(abs((tail.map { abs($0) }.max() ?? 0) - 0.9) < 0.001)
  }

  @Test func fadesStartAndEndAtExactlyZero() {
    var generator = ToneGenerator(sampleRate: rate)
    generator.setTones([(1000, 0.5)])
    var silent = [Float]()
    render(&generator, seconds: 0.01, into: &silent)
    #expect(silent.allSatisfy { $0 == 0 }, "closed gate is silent")
    generator.start()
    var samples = [Float]()
    render(&generator, seconds: 0.1, into: &samples)
    #expect(samples[0] == 0)
    #expect(samples[1] != 0)
    generator.stop()
    let stopAt = samples.count
    render(&generator, seconds: 0.1, into: &samples)
    let fadeEnd = stopAt + generator.fadeSamples
    #expect(samples[fadeEnd] == 0, "fade-out ends at zero")
    #expect(samples[stopAt..<fadeEnd].contains { $0 != 0 })
    #expect(samples[fadeEnd...].allSatisfy { $0 == 0 }, "and stays there")
    #expect(!generator.isSounding)
    // The fades themselves are smooth.
    #expect(
      largestStep(samples[...]) <= maximumStep([(1000, 0.5)]) + 0.5 * .pi
        / Float(generator.fadeSamples))
  }

  /// Frequency from interpolated zero crossings over the whole signal.
  func measuredFrequency(_ samples: [Float]) -> Double {
    var first: Double?
    var last = 0.0
    var crossings = 0
    for n in 1..<samples.count where samples[n - 1] < 0 && samples[n] >= 0 {
      let a = Double(samples[n - 1])
      let b = Double(samples[n])
      let position = Double(n - 1) + (-a) / (b - a)
      if first == nil { first = position } else { crossings += 1 }
      last = position
    }
    return Double(crossings) / ((last - (first ?? 0)) / rate)
  }

  /// Frequency from the phase advance between Hann-windowed one-second
  /// demodulations at the start and the end (unambiguous within ±0.05 Hz of `nominal`).
  func phaseFrequency(_ samples: [Float], nominal: Double) -> Double {
    let window = Int(rate)
    func phase(at start: Int) -> Double {
      var re = 0.0
      var im = 0.0
      for n in 0..<window {
        let weight = 0.5 - 0.5 * cos(2 * Double.pi * Double(n) / Double(window))
        let angle = 2 * Double.pi * nominal * Double(start + n) / rate
        re += weight * Double(samples[start + n]) * cos(angle)
        im -= weight * Double(samples[start + n]) * sin(angle)
      }
      return atan2(im, re)
    }
    let end = samples.count - window
    var difference = phase(at: end) - phase(at: 0)
    difference -= 2 * Double.pi * (difference / (2 * Double.pi)).rounded()
    return nominal + difference / (2 * Double.pi * Double(end) / rate)
  }

  @Test(arguments: [440.0, 1000.37, 1633.0, 19_043.0])
  func frequencyIsWithinOneHundredthOfAHertzOverTenSeconds(frequency: Double) {
    var generator = ToneGenerator(sampleRate: rate)
    generator.setTones([(frequency, 0.5)])
    generator.start()
    var samples = [Float]()
    samples.reserveCapacity(Int(10 * rate))
    render(&generator, seconds: 10, into: &samples)
    let steady = Array(samples[Int(0.01 * rate)...])
    let rough = measuredFrequency(steady)
    #expect(abs(rough - frequency) < 0.05, "\(rough) Hz by zero crossings")
    let measured = phaseFrequency(steady, nominal: rough)
    #expect(abs(measured - frequency) < 0.01, "\(measured) Hz")
  }
}
