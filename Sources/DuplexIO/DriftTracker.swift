/// Watches the playback delay of a capture→playback loop and asks for a
/// few frames to be dropped or repeated when two device clocks drift apart,
/// so latency neither grows nor shrinks into xruns. The first steady mean
/// delay is the reference, so a constant offset (a sound server's own
/// queue) is never "corrected". Audio thread.
struct DriftTracker: Sendable {
  let period: Int
  let isActive: Bool
  private var reference: Int?
  private var sum = 0
  private var count = 0
  private var pending = 0
  private var settled = 0

  init(period: Int, isActive: Bool) {
    self.period = period
    self.isActive = isActive
  }

  /// Adds one delay reading; every 64 periods the mean decides a correction.
  mutating func observe(delay: Int) {
    guard isActive else { return }
    // The first readings after a start are not steady yet.
    if settled < 16 {
      settled += 1
      return
    }
    sum += delay
    count += 1
    guard count == 64 else { return }
    let mean = sum / count
    sum = 0
    count = 0
    guard let reference else {
      self.reference = mean
      return
    }
    let error = mean - reference
    if abs(error) > period {
      // Positive: too much queued, drop frames; negative: repeat frames.
      let step = min(abs(error) - period / 2, period / 2)
      pending = error > 0 ? step : -step
    }
  }

  /// Frames to drop (positive) or repeat (negative) in this period.
  mutating func adjustment() -> Int {
    let value = pending
    pending = 0
    return value
  }
}
