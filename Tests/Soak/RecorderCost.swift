import AudioFiles
import Foundation
import Recording

/// What the transmission recorder costs its thread (the live job's control
/// thread, which also writes its files) per 256-frame period at 48 kHz:
/// `micloop-soak --recorder-cost`, for `make bench`. Ten minutes of noise
/// at −60 dBFS with a 1 kHz transmission at −20 dBFS for 5 s of every 20
/// (a file each, level trigger), handed over as a live job hands it: a
/// block a period, the recorder's clock told and its decisions made every
/// fourth period (the control cycle). The processor time is the thread's
/// own (`CLOCK_THREAD_CPUTIME_ID`): writing included, the best of three.
enum RecorderCost {
  static let rate = 48_000
  static let period = 256
  static let cyclePeriods = 4
  static let seconds = 600
  static let transmissionEvery = 20
  static let transmissionSeconds = 5

  /// Prints the table: one row per channel count.
  static func run() throws {
    print("Cost of the transmission recorder per period (48 kHz, a 5 s transmission every 20 s):")
    print("| period | channels | µs per period | share of the period | files |")
    print("|---|---|---|---|---|")
    for channels in [1, 2] {
      var best = Double.infinity
      var files = 0
      for _ in 0..<3 {
        let (micros, written) = try measure(channels: channels)
        best = min(best, micros)
        files = written
      }
      let share = 100 * best / (Double(period) / Double(rate) * 1e6)
      print(
        "| \(period) | \(channels) | \(String(format: "%.2f", best)) | \(String(format: "%.3f", share)) % | \(files) |"
      )
    }
  }

  /// One run: the processor time per period, in µs, and the files written.
  static func measure(channels: Int) throws -> (Double, Int) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "micloop-recorder-cost-\(getpid())-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    var settings = RecorderSettings()
    settings.trigger = .level(threshold: -30)
    let tally = RecorderTally()
    let recorder = try Recorder(
      settings: settings, sampleRate: Double(rate), channelCount: channels, encoding: .pcm16,
      directory: directory.path,
      clock: StreamClock(sampleRate: Double(rate), startingAt: 1_800_000_000), source: "cost",
      listener: tally.take)
    let minute = input(channels: channels)
    let periodsPerMinute = minute.count / (period * channels)
    let periods = seconds * rate / period
    let start = threadSeconds()
    minute.withUnsafeBufferPointer { samples in
      for index in 0..<periods {
        let offset = (index % periodsPerMinute) * period * channels
        recorder.append(samples.baseAddress! + offset, frameCount: period)
        if index % cyclePeriods == cyclePeriods - 1 {
          recorder.observeArrival(
            streamFrames: Int64((index + 1) * period),
            at: 1_800_000_000 + Double((index + 1) * period) / Double(rate))
          recorder.update()
        }
      }
    }
    recorder.finish()
    let micros = (threadSeconds() - start) / Double(periods) * 1e6
    guard tally.recordings.count == seconds / transmissionEvery, tally.problems.isEmpty else {
      fail("the recorder wrote \(tally.recordings.count) files, problems: \(tally.problems)")
    }
    return (micros, tally.recordings.count)
  }

  /// A minute of interleaved input: noise, and the transmissions.
  static func input(channels: Int) -> [Float] {
    let frames = 60 * rate
    var samples = [Float](repeating: 0, count: frames * channels)
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    let noise = Float(0.001 * 3.0.squareRoot() * 2)
    let tone = Float(0.1 * 2.0.squareRoot())
    for frame in 0..<frames {
      let second = frame / rate
      let sounding = second % transmissionEvery < transmissionSeconds
      let sine =
        sounding ? tone * Float(sin(2 * Double.pi * 1000 * Double(frame) / Double(rate))) : 0
      for channel in 0..<channels {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        samples[frame * channels + channel] =
          (Float(state >> 40) / Float(1 << 24) - 0.5) * noise + sine
      }
    }
    return samples
  }

  /// This thread's processor time, in seconds.
  static func threadSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
