import FeedbackControl
import Foundation
import SignalDSP
import TestSupport
import Testing

@Suite struct NotchBankTests {
  let rate = 48_000.0

  func bank(channels: Int = 1) -> NotchBank {
    NotchBank(
      capacity: 4, channelCount: channels, sampleRate: rate, quality: 7, rampDuration: 0.005)
  }

  /// Runs `samples` through `bank` in periods of 256 frames.
  func filtered(_ samples: [Float], _ bank: NotchBank, channels: Int = 1) -> [Float] {
    var out = samples
    out.withUnsafeMutableBufferPointer { buffer in
      var start = 0
      while start < buffer.count {
        let frames = min(256 * channels, buffer.count - start) / channels
        bank.process(buffer.baseAddress! + start, frameCount: frames)
        start += frames * channels
      }
    }
    return out
  }

  func sine(_ frequency: Double, count: Int, amplitude: Double = 0.5) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / rate)) }
  }

  func level(_ samples: ArraySlice<Float>) -> Double {
    20 * log10(Double(samples.map { abs($0) }.max() ?? 0) / 0.5)
  }

  @Test func aNotchCutsItsCentreByItsDepthAtEveryDepthWithTheSameWidth() {
    let notches = bank()
    notches.place(0, frequency: 2000, depth: 12)
    _ = filtered([Float](repeating: 0, count: 480), notches)  // past the depth ramp
    #expect(abs(notches.response(at: 2000) - -12) < 0.01)
    let third = 2000 * pow(2, 1.0 / 3)
    let shallow = notches.response(at: third)
    notches.setDepth(0, 24)
    _ = filtered([Float](repeating: 0, count: 480), notches)
    #expect(abs(notches.response(at: 2000) - -24) < 0.01)
    // A third of an octave away: under 0.4 dB at either depth, about the same.
    #expect(shallow > -0.4 && notches.response(at: third) > -0.4)
    #expect(abs(notches.response(at: third) - shallow) < 0.15)
    #expect(abs(notches.response(at: 2000 / pow(2, 1.0 / 3))) < 0.4)
  }

  @Test func aFilteredSineComesOutAtTheComputedResponse() {
    let notches = bank()
    notches.place(1, frequency: 3000, depth: 9)
    for frequency in [3000.0, 3150, 3500, 1000] {
      let out = filtered(sine(frequency, count: 24_000), notches)
      let measured = level(out[12_000...])
      #expect(
        abs(measured - notches.response(at: frequency)) < 0.1, "\(frequency) Hz: \(measured) dB")
    }
  }

  @Test func anEmptyBankAndALiftedNotchLeaveEverySampleAsItWas() {
    var random = SplitMix(seed: 9)
    let noise = (0..<20_000).map { _ in Float.random(in: -0.5...0.5, using: &random) }
    let notches = bank(channels: 2)
    #expect(filtered(noise, notches, channels: 2) == noise)
    notches.place(0, frequency: 1500, depth: 12)
    #expect(notches.activeCount == 1)
    #expect(filtered(noise, notches, channels: 2) != noise)
    notches.setDepth(0, 0)
    _ = filtered(Array(noise.prefix(1024)), notches, channels: 2)  // the lift's ramp
    #expect(notches.activeCount == 0 && notches.isEmpty)
    #expect(filtered(noise, notches, channels: 2) == noise)
  }

  @Test func theNearestNotchIsFoundWithinItsReach() {
    let notches = bank()
    notches.place(0, frequency: 1000, depth: 6)
    notches.place(2, frequency: 2000, depth: 6)
    #expect(notches.slot(near: 2050, within: 0.1) == 2)
    #expect(notches.slot(near: 1500, within: 0.1) == nil)
    #expect(notches.freeSlot == 1)
  }
}
