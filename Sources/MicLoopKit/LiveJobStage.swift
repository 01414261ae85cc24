import DuplexIO

/// A feature that follows a whole live job on the control thread, across
/// lost devices, downstream of the job's cycle stages (`LiveCycleStage`):
/// it takes each event, each captured block and how far the tone decoder
/// has heard, and does its own work once a control cycle. The transmission
/// recorder (`RecorderStage`) is one; a job runs its stages in the order
/// given. Control thread only (the job's).
public protocol LiveJobStage: AnyObject {
  /// Each event of the job, in order, after the observer has seen it.
  func handle(_ event: LiveJobEvent)
  /// Each captured block with its stream frame, in order, when the job's
  /// settings ask for the captured audio (`LiveJobSettings.handsOverAudio`).
  /// The block is valid only during the call.
  func captured(_ block: CaptureRing.Block)
  /// The tone decoder has heard the stream up to stream frame `frame`:
  /// every tone that ends before it (less the decoder's own latency) has
  /// been reported. Called after each decoded batch, when decoding tones.
  func decoded(throughFrame frame: Int64)
  /// Once a control cycle (and twice a second while the job waits for a
  /// lost device), after the cycle's events and audio and before the
  /// observer is asked whether to stop; `streamFrames` is how many frames
  /// the job has captured so far.
  func cycleEnded(streamFrames: Int64)
}

extension LiveJobStage {
  public func handle(_ event: LiveJobEvent) {}
  public func captured(_ block: CaptureRing.Block) {}
  public func decoded(throughFrame frame: Int64) {}
  public func cycleEnded(streamFrames: Int64) {}
}
