import Testing

@testable import DuplexIO

/// The drift tracker alone against a model of a playback queue whose clock
/// runs apart from the capture clock, over an hour of simulated time.
@Suite struct DriftTrackerTests {
  struct Run {
    var corrections = 0
    var correctedFrames = 0
    var lowest = Int.max
    var highest = Int.min
  }

  func simulate(offset: Double, seconds: Double, period: Int = 256, rate: Double = 48_000) -> Run {
    var tracker = DriftTracker(period: period, isActive: true)
    var queued = Double(2 * period)
    var run = Run()
    let periods = Int(seconds * rate) / period
    for index in 0..<periods {
      let adjustment = tracker.adjustment()
      if adjustment != 0 {
        run.corrections += 1
        run.correctedFrames += adjustment
      }
      queued += Double(period - adjustment)
      queued -= Double(period) * (1 + offset / 1e6)
      let delay = Int(queued.rounded())
      tracker.observe(delay: delay)
      if index > 100 {
        run.lowest = min(run.lowest, delay)
        run.highest = max(run.highest, delay)
      }
    }
    return run
  }

  @Test(arguments: [100.0, -100.0, 1000.0, -1000.0])
  func latencyStaysBoundedForAnHour(offset: Double) {
    let hour = 3600.0
    let run = simulate(offset: offset, seconds: hour)
    let drift = hour * 48_000 * offset / 1e6
    // Every frame of drift was corrected, in the right direction.
    #expect(abs(Double(-run.correctedFrames) - drift) < 2 * 256)
    #expect(run.corrections > 0)
    // The queue never wandered more than about two periods.
    #expect(run.highest - run.lowest <= 2 * 256 + 64, "\(run.lowest)…\(run.highest)")
    #expect(run.lowest > 0)
  }

  @Test func agreeingClocksAreNeverCorrected() {
    let run = simulate(offset: 0, seconds: 600)
    #expect(run.corrections == 0)
  }
}
