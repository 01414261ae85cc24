import DuplexIO
import FeedbackControl
import Metering
import SignalDSP

#if canImport(Glibc)
  import Glibc
#endif

/// One run of a live job on one opening of its devices, on any duplex
/// backend: starts the unit, then about 50 times a second (the control
/// cycle) runs the control-cycle half of each of the processor's features
/// (`LiveCycleStage`: meter, guard and learner, analysis, capture), which
/// hands what the audio thread left in its ring to the caller; reports
/// xruns and pauses, and stops when the caller asks, after the job's
/// length, or when a device fails. A job
/// that outlives its devices (`LiveJob` with reconnection) runs one
/// session per opening, all on the same `LiveProcessor`.
///
/// Threads: everything here runs on the calling (control) thread, every
/// handler included; the audio thread only fills the processor's rings and
/// counters. Control thread only.
public final class LiveSession<Backend: DuplexBackend> {
  public typealias Unit = DuplexUnit<Backend, LiveProcessor>

  /// How a session ended.
  public struct Outcome: Sendable {
    /// Seconds of input processed (by the job so far, across sessions).
    public var duration: Double
    /// Frames the recording lost because the disk could not keep up.
    public var droppedRecordingFrames: Int
    /// Capture overruns and playback underruns.
    public var overruns: Int
    public var underruns: Int
    /// Frames a sound server lost (native JACK and PipeWire backends; 0 elsewhere).
    public var lostFrames: Int
    /// Whether the caller's `shouldStop` ended the job.
    public var wasStoppedByCaller: Bool
    /// The device error that ended the session, if any.
    public var failure: DuplexError?
    /// When frames last arrived, in `MonotonicClock.seconds`.
    public var lastProgress: Double
  }

  /// What a session hands to its caller, each on the control thread as
  /// the cycle drains it.
  public struct Handlers {
    /// Asked once a cycle: true ends the session (read keys and redraw here).
    public var shouldStop: () -> Bool = { false }
    /// Meter events (levels, talk start and end; the summary when the job ends).
    public var onEvent: (MeterEvent) -> Void = { _ in }
    /// The mono input (when `LiveSettings.isAnalyzing`), in stream order.
    public var onInput: (UnsafeBufferPointer<Float>) -> Void = { _ in }
    /// Captured blocks with their stream frames (when `LiveSettings.isRecording`).
    public var onCaptured: (CaptureRing.Block) -> Void = { _ in }
    /// An xrun on a bus at a stream time, with the frames lost (0 when the backend cannot tell).
    public var onXrun: (Bus, Double, Int) -> Void = { _, _, _ in }
    /// A pause of the whole process (Ctrl-Z): stream time and seconds.
    public var onPause: (Double, Double) -> Void = { _, _ in }
    /// What the howl guard did.
    public var onFeedback: (HowlGuardEvent) -> Void = { _ in }
    /// What the backend did with the connections of a client its sound
    /// server lost (JACK), at a stream time, once it is done.
    public var onConnectionsRestored: (Double, RestoredConnections) -> Void = { _, _ in }
    /// The session's first audio arrived: called once, before anything
    /// of it is handed on (a job that lost its device measures the gap here).
    public var onFirstAudio: () -> Void = {}

    public init() {}
  }

  public let unit: Unit
  public let processor: LiveProcessor
  public let configuration: DuplexConfiguration
  /// Seconds without a processed frame, once audio flowed, after which
  /// the job ends with `deviceLost`: a driver can hang inside a read when
  /// its sound server dies, where the unit's own deadline never runs.
  public var stallLimit = StallWatch.defaultLimit
  /// The same before the first audio of the session: a sound server may
  /// take seconds to start a stream.
  public var startLimit = StallWatch.defaultStartLimit
  /// What paces the control cycles: real time, or a simulated device
  /// stepped a cycle at a time (`SteppedCycles`), where every cycle's
  /// work (rings drained, the loop learned) keeps pace with the device.
  public var cycleClock: any ControlCycleClock = RealTimeCycles()

  /// Opens and configures the devices and prepares the processor for what
  /// they granted (nothing runs yet).
  public convenience init(
    configuration: DuplexConfiguration, backend: Backend, settings: LiveSettings
  ) throws(DuplexError) {
    try self.init(
      configuration: configuration, backend: backend, processor: LiveProcessor(settings: settings))
  }

  /// A session that continues the job of `processor` (a device that came
  /// back): stream time, meter state and totals carry on when the devices
  /// grant the same format.
  public init(configuration: DuplexConfiguration, backend: Backend, processor: LiveProcessor)
    throws(DuplexError)
  {
    self.configuration = configuration
    self.processor = processor
    unit = DuplexUnit(configuration: configuration, backend: backend, client: processor)
    try unit.initialize()
  }

  /// Runs until `handlers.shouldStop` returns true, `duration` seconds of
  /// input (of the job: a continuing session counts from the job's start),
  /// or a device failure, handing everything to `handlers` on the calling
  /// thread. With `endsJob` false and a failure the meter's totals are
  /// not emitted (the job may go on in another session).
  public func run(duration: Double?, endsJob: Bool = true, handlers: Handlers) throws(DuplexError)
    -> Outcome
  {
    let rate = Double(processor.format.sampleRate)
    let frameLimit = duration.map { Int64(($0 * rate).rounded()) }
    // A session continuing a job starts where the last one stopped.
    let alreadyProcessed = Int64(processor.framesProcessed.load(ordering: .acquiring))
    var seenOverruns = 0
    var seenUnderruns = 0
    var reportedLost = 0
    var stoppedByCaller = false
    let cycle = LiveCycle(frameLimit: frameLimit, onFirstAudio: handlers.onFirstAudio)
    let stages = self.stages(handlers, from: alreadyProcessed)
    func drain() {
      // Whatever a ring holds was captured by this session: its first audio.
      if processor.framesProcessed.load(ordering: .acquiring) > alreadyProcessed {
        cycle.arrived()
      }
      for stage in stages { stage.runCycle(cycle) }
    }
    processor.frameLimit.store(frameLimit.map { Int($0) } ?? .max, ordering: .relaxed)
    try unit.start()
    var stall = StallWatch(
      limit: stallLimit, startLimit: startLimit,
      flowingFrames: Int64(StallWatch.flowingTime * rate))
    var stalled = false
    while true {
      let ended = cycleClock.nextCycle { unit.waitUntilStopped(timeout: $0) }
      drain()
      let frames = processor.framesProcessed.load(ordering: .acquiring)
      let time = Double(frames) / rate
      let overruns = unit.statistics.overruns.load(ordering: .relaxed)
      let underruns = unit.statistics.underruns.load(ordering: .relaxed)
      // Frames lost go with the next xrun reported (they may be seen first).
      var lost = unit.statistics.lostFrames.load(ordering: .relaxed) - reportedLost
      for _ in seenOverruns..<overruns {
        handlers.onXrun(.input, time, lost)
        reportedLost += lost
        lost = 0
      }
      for _ in seenUnderruns..<underruns {
        handlers.onXrun(.output, time, lost)
        reportedLost += lost
        lost = 0
      }
      seenOverruns = overruns
      seenUnderruns = underruns
      // Said once audio flows again, after the device is back.
      if cycle.hasAudio, let restored = unit.backend.takeRestoredConnections() {
        handlers.onConnectionsRestored(time, restored)
      }
      if ended { break }
      if handlers.shouldStop() {
        stoppedByCaller = true
        break
      }
      if let frameLimit, Int64(time * rate) >= frameLimit { break }
      if stall.hasStalled(progress: Int64(frames)) {
        stalled = true
        break
      }
      if let pause = stall.takePause() { handlers.onPause(time, pause) }
    }
    unit.stop(deviceLost: stalled || unit.failure?.isDeviceLost == true)
    drain()
    let failure = unit.failure ?? (stalled ? stallFailure(after: stall.waited) : nil)
    if endsJob || failure == nil {
      processor.finishMeter(emit: handlers.onEvent)
    }
    return Outcome(
      duration: Double(processor.framesProcessed.load(ordering: .acquiring)) / rate,
      droppedRecordingFrames: processor.recording?.droppedFrames.load(ordering: .relaxed) ?? 0,
      overruns: unit.statistics.overruns.load(ordering: .relaxed),
      underruns: unit.statistics.underruns.load(ordering: .relaxed),
      lostFrames: unit.statistics.lostFrames.load(ordering: .relaxed),
      wasStoppedByCaller: stoppedByCaller,
      failure: failure,
      lastProgress: stall.lastChange)
  }
}

extension LiveSession {
  /// The control-cycle halves of the processor's features, in the order
  /// each cycle runs them, handing on to `handlers`; the analysis ring's
  /// next frame is stream frame `streamFrame`.
  private func stages(_ handlers: Handlers, from streamFrame: Int64) -> [any LiveCycleStage] {
    var stages: [any LiveCycleStage] = [
      MeterEventStage(processor: processor, onEvent: handlers.onEvent),
      FeedbackCycleStage(processor: processor, onFeedback: handlers.onFeedback),
    ]
    if let analysis = processor.analysis {
      stages.append(
        AnalysisCycleStage(ring: analysis, from: streamFrame, onInput: handlers.onInput))
    }
    if let recording = processor.recording {
      stages.append(CaptureCycleStage(ring: recording, onCaptured: handlers.onCaptured))
    }
    return stages
  }

  /// The failure of a stream that stopped moving.
  private func stallFailure(after stallLimit: Double) -> DuplexError {
    let device =
      configuration.isInputEnabled ? configuration.captureDevice : configuration.playbackDevice
    let seconds = stallLimit >= 1 ? "\(Int(stallLimit))" : "\(stallLimit)"
    return DuplexError(
      .deviceLost, operation: configuration.isInputEnabled ? "capture" : "playback",
      device: device, code: ETIMEDOUT,
      reason: "no audio for \(seconds) s; its sound server may have stopped")
  }
}

/// Watches a counter that should keep growing and says when it has not
/// grown for `limit` seconds of the monotonic clock (`startLimit` until
/// it has grown by `flowingFrames`). A check that comes `pauseLimit` or more after the one
/// before means the whole process was held (stopped by Ctrl-Z or SIGSTOP,
/// or starved): that pause is the process's own, not the device's, so the
/// wait starts again. Control thread.
public struct StallWatch {
  /// Seconds without audio, once it flowed, that mean the device is gone:
  /// a server that died is noticed, and one that came back is reopened,
  /// within a few seconds.
  public static let defaultLimit = 2.0
  /// Seconds a stream may take to deliver its first audio.
  public static let defaultStartLimit = 8.0
  /// Seconds of audio after which a stream counts as flowing: a server
  /// may hand a new stream a first block and then nothing for seconds
  /// (a PulseAudio null sink's monitor waits out its 2 s block).
  public static let flowingTime = 1.0
  let limit: Double
  let startLimit: Double
  /// The longest gap between two checks of a running control loop.
  static let pauseLimit = 1.0
  private var lastProgress: Int64 = -1
  /// The counter at the first check: audio flows once it grows
  /// `flowingFrames` past it.
  private var firstProgress: Int64?
  /// When the counter last grew (`MonotonicClock.seconds`).
  private(set) var lastChange = MonotonicClock.seconds
  private var lastCheck = MonotonicClock.seconds
  /// Seconds of the last pause of the process itself, taken by `takePause`.
  private var pause: Double?

  let flowingFrames: Int64

  init(limit: Double, startLimit: Double, flowingFrames: Int64 = 0) {
    self.limit = limit
    self.startLimit = max(limit, startLimit)
    self.flowingFrames = flowingFrames
  }

  mutating func hasStalled(progress: Int64, now: Double = MonotonicClock.seconds) -> Bool {
    defer { lastCheck = now }
    if firstProgress == nil { firstProgress = progress }
    if now - lastCheck >= Self.pauseLimit {
      pause = now - lastCheck
      lastChange = now
    }
    if progress != lastProgress {
      lastProgress = progress
      lastChange = now
      return false
    }
    let flowed = progress - (firstProgress ?? progress) > flowingFrames
    waited = flowed ? limit : startLimit
    return now - lastChange >= waited
  }

  /// The limit the last check held the counter to.
  private(set) var waited = 0.0

  /// How long the process was held since this was last asked, if it was.
  mutating func takePause() -> Double? {
    defer { pause = nil }
    return pause
  }
}

extension LiveSession where Backend == ALSADevicePair {
  /// A live job on ALSA devices.
  public convenience init(configuration: DuplexConfiguration, settings: LiveSettings)
    throws(DuplexError)
  {
    try self.init(configuration: configuration, backend: ALSADevicePair(), settings: settings)
  }
}
