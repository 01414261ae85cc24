import Foundation
import Metering
import SignalDSP
import TestSupport

/// Runs a mono signal through a default meter, in 4096-frame blocks as a
/// file meter would, and collects what it reports.
enum MeterRun {
  /// Every event the meter reports for `samples`.
  static func events(
    _ samples: [Float], sampleRate: Double = 48_000, settings: MeterSettings = MeterSettings()
  ) -> [MeterEvent] {
    let meter = MeterProcessor(
      sampleRate: sampleRate, channelCount: 1, settings: settings, maximumBlock: 4096)
    var copy = samples
    var result = [MeterEvent]()
    let emit = { (event: MeterEvent) in result.append(event) }
    copy.withUnsafeMutableBufferPointer { buffer in
      var offset = 0
      while offset < buffer.count {
        let count = min(4096, buffer.count - offset)
        meter.process(buffer.baseAddress! + offset, frameCount: count, emit: emit)
        offset += count
      }
    }
    meter.finish(emit: emit)
    return result
  }

  /// Talk segments (start, end) in seconds.
  static func segments(_ events: [MeterEvent]) -> [(start: Double, end: Double)] {
    var result = [(start: Double, end: Double)]()
    var start: Double?
    for event in events {
      switch event {
      case .talkStart(let time): start = time
      case .talkEnd(let time): result.append((start ?? 0, time))
      default: break
      }
    }
    return result
  }

  /// White noise at `level` dBFS RMS (seeded), `seconds` long.
  static func noise(_ seconds: Double, level: Double, seed: UInt64, sampleRate: Double = 48_000)
    -> [Float]
  {
    var random = SplitMix(seed: seed)
    let amplitude = Float(Decibels.amplitude(level) * 3.0.squareRoot())
    return (0..<Int(seconds * sampleRate)).map { _ in
      Float.random(in: -1...1, using: &random) * amplitude
    }
  }

  /// `signal` added into `bed` from `seconds` on.
  static func mix(
    _ signal: [Float], into bed: [Float], at seconds: Double, sampleRate: Double = 48_000
  )
    -> [Float]
  {
    var result = bed
    let start = Int(seconds * sampleRate)
    for index in signal.indices where start + index < result.count {
      result[start + index] += signal[index]
    }
    return result
  }
}
