/// Measures the audio a pause of the whole process cost (Ctrl-Z, SIGSTOP,
/// a starved machine). While micloop is held the device or its sound
/// server keeps what its buffer holds — a hardware device a few periods, a
/// sound server sometimes seconds — and drops the rest without a word; what
/// it kept arrives in a burst after the pause. Once a control cycle brings
/// audio no faster than real time again, the wall time since the last
/// arrival before the pause, less the audio that arrived since, is what was
/// lost. Control thread.
struct PauseLoss {
  /// A cycle that brings audio at most this much faster than real time
  /// has none held back any more (a cycle's timing jitters).
  static let steadyRatio = 1.5
  /// Seconds after a pause by which the audio held back has surely arrived.
  static let longestBurst = 3.0
  /// Smaller losses are the jitter of the arrivals, not audio lost.
  static let smallestLoss = 0.05

  typealias Arrival = (frames: Int64, time: Double)
  let sampleRate: Double
  private var last: Arrival?
  private var beforeLast: Arrival?
  private var pending: (before: Arrival, since: Double)?

  init(sampleRate: Double) { self.sampleRate = sampleRate }

  /// Notes that `frames` stream frames had arrived by `time` (monotonic
  /// seconds), once a control cycle; returns the seconds of audio a pause
  /// cost once they are known (at least `smallestLoss`).
  mutating func observe(frames: Int64, at time: Double) -> Double? {
    defer {
      beforeLast = last
      last = (frames, time)
    }
    guard let pause = pending, let last else { return nil }
    let cycle = time - last.time
    let arrived = Double(frames - last.frames) / sampleRate
    let isSteady = cycle > 0 && arrived <= cycle * Self.steadyRatio
    guard isSteady || time - pause.since >= Self.longestBurst else { return nil }
    pending = nil
    let lost = (time - pause.before.time) - Double(frames - pause.before.frames) / sampleRate
    return lost >= Self.smallestLoss ? lost : nil
  }

  /// The process was just found to have been held (after this cycle's
  /// `observe`): the arrival before this cycle's is the last one before it.
  mutating func paused() {
    guard pending == nil, let last, let before = beforeLast else { return }
    pending = (before, last.time)
  }
}
