/// Measures the audio a pause of the whole process cost (Ctrl-Z, SIGSTOP,
/// a starved machine), or a playback underrun's recovery (a sound server
/// may take seconds to play a restarted stream, while the loop waits on it
/// and the capture side overflows in the server). Meanwhile the device or
/// its sound server keeps what its buffer holds — a hardware device a few
/// periods, a sound server sometimes seconds — and drops the rest without
/// a word; what it kept arrives in a burst afterwards. Once a control cycle
/// brings audio no faster than real time again, the wall time since the
/// last arrival before the event, less the audio that arrived since, is
/// what was lost. Control thread.
struct AudioLossWatch {
  /// A cycle that brings audio at most this much faster than real time
  /// has none held back any more (a cycle's timing jitters).
  static let steadyRatio = 1.5
  /// A cycle that brings less than this share of real time is still held
  /// up (a restarted playback stream the loop waits on); a cycle shorter
  /// than a period may also bring nothing, and the next one decides.
  static let flowingRatio = 0.5
  /// Seconds the audio must arrive steadily before the loss is taken as
  /// known: the stall of an underrun's recovery may begin a few periods
  /// after the underrun, once what the capture buffer held is read.
  static let settleTime = 0.5
  /// Seconds after a pause by which the audio held back has surely arrived.
  static let longestBurst = 3.0
  /// Smaller losses are the jitter of the arrivals, not audio lost.
  static let smallestLoss = 0.05

  typealias Arrival = (frames: Int64, time: Double)
  /// Seconds of audio lost, and what cost them.
  typealias Loss = (seconds: Double, cause: AudioLossCause)
  let sampleRate: Double
  private var last: Arrival?
  private var beforeLast: Arrival?
  private var pending: (before: Arrival, since: Double, cause: AudioLossCause)?
  /// Since when the cycles after the event have brought audio steadily.
  private var steadySince: Double?

  init(sampleRate: Double) { self.sampleRate = sampleRate }

  /// Notes that `frames` stream frames had arrived by `time` (monotonic
  /// seconds), once a control cycle; returns the seconds of audio a pause
  /// or an underrun's recovery cost once they are known (at least
  /// `smallestLoss`), and which it was.
  mutating func observe(frames: Int64, at time: Double) -> Loss? {
    defer {
      beforeLast = last
      last = (frames, time)
    }
    guard let pause = pending, let last else { return nil }
    let cycle = time - last.time
    let arrived = Double(frames - last.frames) / sampleRate
    let isSteady =
      cycle > 0 && arrived <= cycle * Self.steadyRatio && arrived >= cycle * Self.flowingRatio
    if !isSteady {
      steadySince = nil
    } else if steadySince == nil {
      steadySince = last.time
    }
    let hasSettled = steadySince.map { time - $0 >= Self.settleTime } ?? false
    guard hasSettled || time - pause.since >= Self.longestBurst else { return nil }
    pending = nil
    steadySince = nil
    // A stream still held up when the burst is surely over is reported up
    // to now and watched on: what it loses from here is measured from here.
    if !hasSettled && arrived < cycle * Self.flowingRatio {
      pending = ((frames, time), time, pause.cause)
    }
    return loss(from: pause.before, to: (frames, time), cause: pause.cause)
  }

  /// The loss still being measured when the stream ends at `time` with
  /// `frames` arrived (a job stopped while the loop waited on playback):
  /// all of it is known now.
  mutating func finish(frames: Int64, at time: Double) -> Loss? {
    guard let pause = pending else { return nil }
    pending = nil
    return loss(from: pause.before, to: (frames, time), cause: pause.cause)
  }

  /// Wall time between two arrivals less the audio that came between them.
  private func loss(from before: Arrival, to now: Arrival, cause: AudioLossCause) -> Loss? {
    let lost = (now.time - before.time) - Double(now.frames - before.frames) / sampleRate
    return lost >= Self.smallestLoss ? (lost, cause) : nil
  }

  /// The process was just found to have been held, or playback to have
  /// underrun (after this cycle's `observe`): the arrival before this
  /// cycle's is the last one before it.
  mutating func suspect(_ cause: AudioLossCause) {
    guard pending == nil, let last, let before = beforeLast else { return }
    pending = (before, last.time, cause)
    steadySince = nil
  }
}

/// What cost audio that never reached micloop (`LiveJobEvent.audioLost`).
public enum AudioLossCause: Sendable {
  /// The whole process was held (stopped or starved).
  case pause
  /// The loop waited while playback recovered from an underrun.
  case underrun

  /// The reason the loss is reported and indexed under, as a `gap`.
  public var gapReason: String { self == .pause ? "pause" : "xrun" }
}
