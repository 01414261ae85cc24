import Foundation
import Metering
import SignalDSP
import TestSupport
import Testing

/// A meter's readings depend on the samples alone, not on how they are cut
/// into blocks: a device's callbacks, a pipe's 16k-frame blocks and a
/// file's 64k-frame blocks all read the same.
@Suite struct BlockIndependenceTests {
  static let rate = 48_000.0
  /// Frames per `process` call, from single frames to a file meter's blocks.
  static let blockSizes = [1, 7, 256, 4_800, 16_384, 65_536]

  /// 2.5 s of a quiet 440 Hz tone under hiss, with 1 kHz bursts (150 ms
  /// every 400 ms, 18 dB louder, the last louder still) and a loud
  /// transient, so that the meter renews its hold, falls and rises again.
  static func signal(channels: Int) -> [Float] {
    var random = SplitMix(seed: 7)
    let frames = Int(2.5 * rate)
    var samples = [Float](repeating: 0, count: frames * channels)
    for frame in 0..<frames {
      let time = Double(frame) / rate
      var value = 0.03 * sin(2 * Double.pi * 440 * time)
      value += Double(Float.random(in: -0.002...0.002, using: &random))
      let phase = time.truncatingRemainder(dividingBy: 0.4)
      if phase >= 0.1 && phase < 0.25 {
        value += (time > 2 ? 0.5 : 0.24) * sin(2 * Double.pi * 1_000 * time)
      }
      if frame >= 77_777 && frame < 77_783 { value += 0.9 }
      for channel in 0..<channels {
        samples[frame * channels + channel] = Float(value) * (channel == 0 ? 1 : 0.7)
      }
    }
    return samples
  }

  /// Every event of a meter fed `samples` in calls of `block` frames.
  static func events(
    _ samples: [Float], channels: Int, settings: MeterSettings, block: Int
  ) -> [MeterEvent] {
    let meter = MeterProcessor(
      sampleRate: rate, channelCount: channels, settings: settings,
      maximumBlock: blockSizes.max()!)
    var copy = samples
    var result = [MeterEvent]()
    let emit = { (event: MeterEvent) in result.append(event) }
    copy.withUnsafeMutableBufferPointer { buffer in
      let frames = buffer.count / channels
      var frame = 0
      while frame < frames {
        let count = min(block, frames - frame)
        meter.process(buffer.baseAddress! + frame * channels, frameCount: count, emit: emit)
        frame += count
      }
    }
    meter.finish(emit: emit)
    return result
  }

  @Test(
    .slow,
    arguments: [
      (MeterBallistics.digital, 1), (.digital, 2), (.ppm2, 1), (.vu, 2), (.lufs, 2),
    ])
  func everyBlockSizeGivesTheSameReadings(ballistics: MeterBallistics, channels: Int) {
    var settings = MeterSettings()
    settings.ballistics = ballistics
    settings.measuresLoudness = ballistics == .lufs
    let samples = Self.signal(channels: channels)
    let reference = Self.events(
      samples, channels: channels, settings: settings, block: Self.blockSizes.last!)
    #expect(reference.count > 25)
    for block in Self.blockSizes.dropLast() {
      let events = Self.events(samples, channels: channels, settings: settings, block: block)
      #expect(events.count == reference.count, "\(block)-frame blocks")
      let differing = zip(events, reference).enumerated().filter { $0.element.0 != $0.element.1 }
      #expect(
        differing.isEmpty,
        "\(block)-frame blocks: \(differing.count) events differ, first \(differing.first.map { "\($0.element.0) vs \($0.element.1)" } ?? "")"
      )
    }
  }
}
