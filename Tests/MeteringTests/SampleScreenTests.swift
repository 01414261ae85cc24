import Foundation
import Testing

@testable import Metering

/// Damaged float samples are not metered as sound: values beyond +60 dBFS
/// count like NaN, and subnormal values are silence.
@Suite struct SampleScreenTests {
  func summary(of samples: [Float], rate: Double = 8_000) -> MeterSummary {
    let meter = MeterProcessor(sampleRate: rate, channelCount: 1, settings: MeterSettings())
    var copy = samples
    var result: MeterSummary?
    copy.withUnsafeMutableBufferPointer { buffer in
      meter.process(buffer.baseAddress!, frameCount: buffer.count) { _ in }
    }
    meter.finish { event in if case .summary(let summary) = event { result = summary } }
    return result!
  }

  func tone(_ count: Int, amplitude: Float) -> [Float] {
    (0..<count).map { amplitude * Float(sin(2 * Double.pi * 1_000 * Double($0) / 8_000)) }
  }

  @Test(arguments: [Float(1e23), 1e38, Float.greatestFiniteMagnitude, -1e5])
  func samplesFarBeyondFullScaleAreDamagedData(_ value: Float) {
    var samples = tone(8_000, amplitude: 0.5)
    for index in stride(from: 100, to: 8_000, by: 1_000) { samples[index] = value }
    let result = summary(of: samples)
    #expect(result.invalidSamples == 8)
    // The tone alone: −6 dBFS peak, not hundreds of dB.
    #expect(
      abs((result.peakDecibels ?? 99) - -6.02) < 0.1, "\(String(describing: result.peakDecibels))")
  }

  @Test func loudButPlausibleFloatAudioIsSound() {
    // +40 dBFS: a float stream before its gain stage.
    let result = summary(of: tone(8_000, amplitude: 100))
    #expect(result.invalidSamples == 0)
    #expect(abs((result.peakDecibels ?? 0) - 40) < 0.1)
  }

  @Test func subnormalSamplesAreSilenceInPeakAndRMSAlike() {
    let samples = (0..<8_000).map { Float.leastNonzeroMagnitude * Float($0 % 5) }
    let result = summary(of: samples)
    #expect(result.peakDecibels == nil, "\(String(describing: result.peakDecibels))")
    #expect(result.rmsDecibels == nil)
    #expect(result.invalidSamples == 0)
  }

  @Test func theScreenCatchesEveryLaneAndTheTail() {
    for position in 0..<19 {
      var samples = [Float](repeating: 0.25, count: 19)
      samples[position] = .nan
      let damaged = samples.withUnsafeMutableBufferPointer {
        SampleScreen.screen($0.baseAddress!, count: $0.count)
      }
      #expect(damaged == 1 && samples[position] == 0, "position \(position)")
    }
  }
}
