import Foundation
import Metering
import Testing

/// The standard meters read the standards' tone bursts and steps as the
/// standards say.
@Suite struct BallisticsTests {
  static let rate = 48_000.0

  /// A 5 kHz tone (IEC 60268-10's burst frequency) at `amplitude`, `seconds` long.
  func tone(_ seconds: Double, amplitude: Double = 0.5, frequency: Double = 5_000) -> [Float] {
    (0..<Int((seconds * Self.rate).rounded())).map {
      Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Self.rate))
    }
  }

  /// The meter's readings every millisecond while it is fed `samples`.
  func readings(_ ballistics: MeterBallistics, _ samples: [Float]) -> [Double] {
    var meter = BallisticMeter(ballistics: ballistics, sampleRate: Self.rate)
    var result = [Double]()
    samples.withUnsafeBufferPointer { buffer in
      var start = 0
      while start < buffer.count {
        let count = min(48, buffer.count - start)
        meter.process(buffer.baseAddress! + start, count: count)
        result.append(meter.decibels ?? -200)
        start += count
      }
    }
    return result
  }

  /// The highest reading of a burst of `seconds` followed by silence,
  /// relative to the steady tone's.
  func burstReading(_ ballistics: MeterBallistics, _ seconds: Double) -> Double {
    let steady = readings(ballistics, tone(1)).last!
    let burst = readings(ballistics, tone(seconds) + [Float](repeating: 0, count: 4800)).max()!
    return burst - steady
  }

  @Test func typeTwoReadsTheStandardBursts() {
    for ballistics in [MeterBallistics.ppm2, .ebu] {
      #expect(abs(burstReading(ballistics, 0.010) - -2) <= 0.5)
      #expect(abs(burstReading(ballistics, 0.005) - -4) <= 0.5)
      #expect(abs(burstReading(ballistics, 0.0015) - -9) <= 1)
    }
  }

  @Test func typeOneReadsAFiveMillisecondBurstTwoDecibelsLow() {
    #expect(abs(burstReading(.ppm1, 0.005) - -2) <= 0.5)
  }

  @Test func quasiPeakMetersReadTheSteadyPeak() {
    for ballistics in [MeterBallistics.ppm1, .ppm2, .ebu] {
      let steady = readings(ballistics, tone(1, amplitude: 0.5)).last!
      #expect(abs(steady - 20 * log10(0.5)) <= 0.2, "\(ballistics): \(steady)")
    }
  }

  /// Milliseconds after the end of a tone until the reading falls `decibels` below it.
  func fallTime(_ ballistics: MeterBallistics, by decibels: Double) -> Double? {
    let toneEnd = 500
    let values = readings(ballistics, tone(0.5) + [Float](repeating: 0, count: Int(5 * Self.rate)))
    let top = values[toneEnd - 1]
    return values[toneEnd...].firstIndex { $0 <= top - decibels }.map {
      Double($0 - toneEnd) / 1000
    }
  }

  @Test func digitalMeterHoldsOneSecondThenFallsTwentyDecibelsInOneSevenSeconds() {
    let values = readings(.digital, tone(0.5) + [Float](repeating: 0, count: Int(5 * Self.rate)))
    let top = values[499]
    #expect(abs(top - 20 * log10(0.5)) < 0.01)
    // Held for a second after the tone's last peak…
    #expect(abs(values[1490] - top) < 0.01)
    // …then 20 dB down 1.7 s ± 0.3 s later.
    if let fall = fallTime(.digital, by: 20) {
      #expect(fall >= 1 + 1.4 && fall <= 1 + 2.0, "fell 20 dB after \(fall) s")
    } else {
      Issue.record("never fell 20 dB")
    }
  }

  @Test func programmeMetersFallAtTheirRates() {
    // Type I: 20 dB in 1.7 s; Type II: 24 dB in 2.8 s (± 0.3 s).
    if let fall = fallTime(.ppm1, by: 20) { #expect(abs(fall - 1.7) <= 0.3, "\(fall)") }
    if let fall = fallTime(.ppm2, by: 24) { #expect(abs(fall - 2.8) <= 0.3, "\(fall)") }
  }

  @Test func vuReachesNinetyNinePercentOfAStepInThreeHundredMilliseconds() {
    let values = readings(.vu, tone(2, amplitude: 0.5, frequency: 1_000))
    let steady = values.last!
    // A sine reads its RMS.
    #expect(abs(steady - 20 * log10(0.5 / 2.0.squareRoot())) < 0.1, "\(steady)")
    // 99 % of the steady deflection (linear) after 300 ms ± 10 %.
    let target = steady + 20 * log10(0.99)
    let reached = values.firstIndex { $0 >= target }.map { Double($0 + 1) / 1000 }
    #expect(reached.map { abs($0 - 0.3) <= 0.03 } == true, "reached 99 % after \(reached ?? -1) s")
    // And falls as it rises: 1 % of the deflection left 300 ms after the tone.
    let falling = readings(.vu, tone(2, frequency: 1_000) + [Float](repeating: 0, count: 24_000))
    let afterStop = falling[2000 + 299]
    #expect(abs(afterStop - (falling[1999] + 20 * log10(0.01))) <= 3, "\(afterStop)")
  }

  @Test func loudnessBallisticsReadNothingHere() {
    #expect(readings(.lufs, tone(0.1)).allSatisfy { $0 == -200 })
  }

  /// Two meters fed in turn from interleaved stereo read, bit for bit,
  /// what each reads fed its channel alone, under every ballistics.
  @Test(arguments: MeterBallistics.allCases)
  func twoMetersInTurnReadAsEachAlone(ballistics: MeterBallistics) {
    let left = tone(0.3, amplitude: 0.7, frequency: 440)
    let right = tone(0.3, amplitude: 0.2, frequency: 5_000)
    let frames = zip(left, right).flatMap { [$0, $1] }
    var (alone, aloneRight) = (
      BallisticMeter(ballistics: ballistics, sampleRate: Self.rate),
      BallisticMeter(ballistics: ballistics, sampleRate: Self.rate)
    )
    var (paired, pairedRight) = (alone, aloneRight)
    var (readings, pairedReadings) = ([Double?](), [Double?]())
    for start in stride(from: 0, to: left.count, by: 100) {
      let count = min(100, left.count - start)
      left.withUnsafeBufferPointer { alone.process($0.baseAddress! + start, count: count) }
      right.withUnsafeBufferPointer { aloneRight.process($0.baseAddress! + start, count: count) }
      frames.withUnsafeBufferPointer {
        BallisticMeter.process(
          &paired, $0.baseAddress! + 2 * start, &pairedRight, $0.baseAddress! + 2 * start + 1,
          count: count, stride: 2)
      }
      readings += [alone.decibels, aloneRight.decibels]
      pairedReadings += [paired.decibels, pairedRight.decibels]
    }
    #expect(pairedReadings == readings)
    if ballistics != .lufs { #expect(readings.last! != readings[readings.count - 2]) }
  }
}
