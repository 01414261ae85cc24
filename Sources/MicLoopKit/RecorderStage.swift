import AudioFiles
import DuplexIO
import Metering
import Recording
import TextFormatting
import ToneDecoding
import TonePlans

/// The transmission recorder as a stage of a live job: hands a `Recorder`
/// the captured blocks (a hole between two blocks, frames the capture ring
/// had to drop, becomes an `overflow` gap), the talk detector's events,
/// decoded tones and how far the decoder has heard, capture xruns, and a
/// lost device's absence (a `deviceLost` gap as long as the wall time it
/// lasted). Each control cycle it tells the recorder's clock when frames
/// arrived and lets the recorder decide. Control thread (the job's).
public final class RecorderStage: LiveJobStage {
  public let recorder: Recorder
  /// The stream frame the next captured block should begin at.
  private var expectedFrame: Int64?
  private var lostReason = ""
  /// How long the last pause of the process was.
  private var lastPause = 0.0

  public init(recorder: Recorder) {
    self.recorder = recorder
  }

  /// The live job's settings for `settings`: the talk meter with the talk
  /// trigger, the captured audio handed over, tones decoded for the plans
  /// the recording needs (every repeat reported: the recorder matches calls).
  public static func jobSettings(
    for settings: RecorderSettings, detection: ToneDetectionSettings, duration: Double?,
    recovery: DeviceRecovery, captureBuffer: Double, showsLevels: Bool = false
  ) -> LiveJobSettings {
    var job = LiveJobSettings()
    // The talk trigger needs the meter; a level trigger meters only for
    // whoever watches the levels (a station), and the recorder then
    // ignores its talk events.
    if case .talk = settings.trigger {
      job.live.meter = settings.meter
    } else {
      job.live.meter = showsLevels ? settings.meter : nil
    }
    job.live.recordingBuffer = captureBuffer
    job.handsOverAudio = true
    job.duration = duration
    var recovery = recovery
    // The recorder puts a gap on the timeline itself; no silence is written.
    recovery.fillsGaps = false
    job.recovery = recovery
    let plans = settings.decodedPlans
    if !plans.isEmpty {
      job.tones = LiveToneSettings(plans: plans, detection: detection, repeatWindow: 0)
    }
    return job
  }

  public func handle(_ event: LiveJobEvent) {
    switch event {
    case .meter(let meter):
      switch meter {
      case .talkStart(let time): recorder.talk(isStart: true, at: time)
      case .talkEnd(let time): recorder.talk(isStart: false, at: time)
      case .level(let reading): recorder.detector(reached: reading.time)
      case .summary(let summary): recorder.detector(reached: summary.duration)
      }
    case .tone(let tone): recorder.tone(tone)
    case .xrun(let bus, let time, let lostFrames):
      // A playback underrun does not touch a recording.
      guard bus == .input else { return }
      recorder.xrun(at: time, lostFrames: lostFrames > 0 ? lostFrames : nil)
    case .deviceLost(_, let failure):
      lostReason = failure.description
      recorder.update()
    case .deviceBack(_, let gap, _):
      let frames = Int64((gap * recorder.sampleRate).rounded())
      recorder.gap(frames: frames, reason: .deviceLost, detail: lostReason, streamContinues: false)
    case .pause(_, let seconds):
      lastPause = seconds
    case .audioLost(_, let seconds, let cause):
      // Where the audio now ends: what the device held came first.
      let frames = Int64((seconds * recorder.sampleRate).rounded())
      switch cause {
      case .pause:
        recorder.gap(
          frames: frames, reason: .pause,
          detail:
            "micloop was held for \(DecimalFormatting.fixed(lastPause, places: 1)) s (stopped or starved)",
          streamContinues: false)
      case .underrun:
        recorder.gap(
          frames: frames, reason: .xrun,
          detail: "the device held up the loop while playback recovered from an underrun",
          streamContinues: false)
      }
    case .feedback, .connectionsRestored:
      break
    }
  }

  public func captured(_ block: CaptureRing.Block) {
    guard let base = block.samples.baseAddress else { return }
    if let expected = expectedFrame, block.streamFrame > expected {
      // The capture ring was full: those frames never reached the recorder.
      recorder.gap(
        frames: block.streamFrame - expected, reason: .overflow,
        detail: "the capture buffer overflowed: the disk or the machine could not keep up",
        streamContinues: true)
    }
    recorder.append(base, frameCount: block.frameCount)
    expectedFrame = block.streamFrame + Int64(block.frameCount)
  }

  public func decoded(throughFrame frame: Int64) {
    recorder.decoder(reached: frame)
  }

  public func cycleEnded(streamFrames: Int64) {
    // Before the first frames arrive there is nothing to place: the
    // stream has not started, and "0 frames by now" would date it early.
    if streamFrames > 0 { recorder.observeArrival(streamFrames: streamFrames, at: SystemClock.now) }
    recorder.update()
  }

  /// Ends the recording: every file closed and published, the summary.
  @discardableResult
  public func finish() -> SessionSummary {
    recorder.finish()
  }
}
