/// The control-cycle half of a live feature. Its audio-thread half is a
/// part of `LiveProcessor` that leaves what it measured or captured in a
/// ring of its own; once a control cycle, and once more after the devices
/// stop, a `LiveSession` asks each stage in turn to take what its half left
/// and hand it on. The meter's events, the howl guard's events and the
/// loop learner, the mono input for the tone decoder and the captured audio
/// for the recording are one stage each; a new live feature adds its half
/// to the processor and a stage here. Control thread only.
public protocol LiveCycleStage: AnyObject {
  /// Takes what the audio thread left since the last cycle and hands it
  /// on, calling `cycle.arrived()` before the first of it.
  func runCycle(_ cycle: LiveCycle)
}

/// What the control cycles of one session share with its stages: how far
/// the job may run, and whether its first audio has arrived. Control
/// thread only.
public final class LiveCycle {
  /// The job's length in stream frames, if it has one: nothing captured
  /// past it is handed on.
  public let frameLimit: Int64?
  /// Whether the session's first audio has arrived.
  public private(set) var hasAudio = false
  private let onFirstAudio: () -> Void

  init(frameLimit: Int64?, onFirstAudio: @escaping () -> Void) {
    self.frameLimit = frameLimit
    self.onFirstAudio = onFirstAudio
  }

  /// Audio of this session is about to be handed on: the first call says
  /// so, before any of it (a job that lost its device measures the gap then).
  public func arrived() {
    guard !hasAudio else { return }
    hasAudio = true
    onFirstAudio()
  }
}
