import AudioFiles
import DuplexIO
import Metering
import SignalDSP
import ToneDecoding
import TonePlans

#if canImport(Glibc)
  import Glibc
#endif

/// What a live job does when its device or sound server goes away.
public struct DeviceRecovery: Sendable, Equatable {
  /// Wait for the device to come back and carry on, instead of ending.
  public var reconnects = false
  /// Fill the recording with silence as long as each gap, so its timeline
  /// is wall time.
  public var fillsGaps = false
  /// Seconds between attempts to open a lost device again.
  public var retryInterval = 0.5

  public init(reconnects: Bool = false, fillsGaps: Bool = false) {
    self.reconnects = reconnects
    self.fillsGaps = fillsGaps
  }
}

/// The tones a live job decodes.
public struct LiveToneSettings: Sendable {
  public var plans: [TonePlan]
  public var detection: ToneDetectionSettings
  /// Seconds after a call during which the same call is a repeat (dropped); 0 reports every repeat.
  public var repeatWindow: Double

  public init(
    plans: [TonePlan], detection: ToneDetectionSettings = ToneDetectionSettings(),
    repeatWindow: Double = 3
  ) {
    self.plans = plans
    self.detection = detection
    self.repeatWindow = repeatWindow
  }
}

/// Settings of a live job; every field has a default.
public struct LiveJobSettings: Sendable {
  /// What the audio thread does (meter, gain, guard, rings).
  public var live = LiveSettings()
  /// Seconds of input after which the job ends; `nil` runs until stopped.
  public var duration: Double?
  /// Records the captured input to this file, in a sample encoding that
  /// keeps every bit the devices deliver.
  public var recordingPath: String?
  /// Decode tones in the input (the mix, or `live.analysisChannel`).
  public var tones: LiveToneSettings?
  /// What happens when a device goes away.
  public var recovery = DeviceRecovery()
  /// Hand every captured block to the job's stages (`LiveJobStage.captured`).
  public var handsOverAudio = false
  /// Seconds without audio, once it flowed, after which a session counts
  /// its device as lost (`startLimit` before its first audio). Only a job
  /// that reconnects uses it: it reopens a server that died as soon as it
  /// is back. A job that does not waits `startLimit`, since a stall it
  /// took for a loss would end it (a busy machine can starve a server for
  /// seconds).
  public var stallLimit = StallWatch.defaultLimit
  public var startLimit = StallWatch.defaultStartLimit

  /// The stall limit a session of this job is given.
  var sessionStallLimit: Double {
    recovery.reconnects ? stallLimit : max(stallLimit, startLimit)
  }

  public init() {}
}

/// Why a live job could not start or go on.
public enum LiveJobError: Error, Sendable {
  /// The devices could not be opened or started.
  case device(DuplexError)
  /// A tone plan cannot run at the rate the devices granted.
  case tones(TonePlanError)
  /// The recording could not be created.
  case recording(AudioFileError)
  /// A lost device came back in another format; the job cannot go on as one.
  case formatChanged(sampleRate: Int, channelCount: Int)
  /// The ring-out plan was made at another rate than the devices granted.
  case ringOutRate(planRate: Int, deviceRate: Int)
}

/// A live job from start to end, on any duplex backend: opens the devices
/// (one `LiveSession` per opening), meters, decodes tones, records, guards
/// the output, and, when a device goes away, waits for it, opens it again
/// and carries on the same job (stream time, meter, decoder), filling the
/// recording's gap with silence as long as the wall time it lasted.
/// Everything that happens reaches a `LiveJobObserver` as typed events,
/// and then the job's stages (`LiveJobStage`, the recorder), which also
/// get the captured audio and the decoder's progress.
///
/// Threads: the job is made and run on one thread, the control thread,
/// which also runs every observer call. Each session's unit runs the audio
/// thread (or the sound server's), which only fills the processor's rings
/// (meter events, howl-guard events, the mono input for the decoder, the
/// captured audio with its stream positions) and counters; the control
/// thread drains them about 50 times a second, decodes tones, writes the
/// recording and calls the observer. `processor`'s gain and mute may be set
/// from the control thread while the job runs.
public final class LiveJob<Backend: DuplexBackend> {
  /// How a job ended.
  public struct Outcome: Sendable {
    /// Seconds of input processed (stream time; gaps not counted).
    public var duration: Double
    /// Frames in the recording, filled gaps included.
    public var recordedFrames: Int64
    /// Frames of silence written for gaps.
    public var filledFrames: Int64
    /// Frames the recording lost because the disk could not keep up.
    public var droppedRecordingFrames: Int
    /// Capture overruns and playback underruns, over every session.
    public var xruns: Int
    /// Frames sound servers said were lost, over every session.
    public var lostFrames: Int
    /// Input frames the tone decoder never heard because it fell behind.
    public var undecodedFrames: Int
    /// Whether the observer's `shouldStop` ended the job.
    public var wasStoppedByCaller: Bool
    /// The device error that ended the job, if any.
    public var failure: DuplexError?
    /// A recording error that ended the job, if any.
    public var recordingFailure: AudioFileError?
  }

  public let configuration: DuplexConfiguration
  public let settings: LiveJobSettings
  /// The audio thread's client, shared by every session of the job: set
  /// its gain and mute here (control thread).
  public let processor: LiveProcessor
  /// Tones reported and their tallies (when decoding tones).
  public let tones: ToneTally?
  private let makeBackend: () throws(DuplexError) -> Backend
  /// What paces the job's control cycles (`LiveSession.cycleClock`),
  /// carried from each session to the next: real time, or a simulated
  /// device stepped as fast as the processor allows.
  public var cycleClock: any ControlCycleClock = RealTimeCycles()
  private var session: LiveSession<Backend>
  /// Sessions of devices that were lost: kept, never torn down, since a
  /// driver that hung may never return from closing.
  private var retired = [LiveSession<Backend>]()
  private var decoder: ToneDecoder?
  private var recording: RecordingSink?

  /// What the current devices granted.
  public var granted: GrantedConfiguration? { session.unit.granted }
  /// Whether the audio thread got real-time priority.
  public var isRealtime: Bool { session.unit.isRealtime }

  /// Opens the devices and prepares everything the job needs for what
  /// they granted (the decoder, the recording file); nothing runs yet.
  /// `makeBackend` makes the backend of each opening (the first and each
  /// after a loss).
  public init(
    configuration: DuplexConfiguration, settings: LiveJobSettings,
    makeBackend: @escaping () throws(DuplexError) -> Backend
  ) throws(LiveJobError) {
    self.configuration = configuration
    self.settings = settings
    self.makeBackend = makeBackend
    var live = settings.live
    live.isAnalyzing = live.isAnalyzing || settings.tones != nil
    live.isRecording =
      live.isRecording || settings.recordingPath != nil || settings.handsOverAudio
    processor = LiveProcessor(settings: live)
    do {
      session = try LiveSession(
        configuration: configuration, backend: makeBackend(), processor: processor)
    } catch { throw .device(error) }
    session.stallLimit = settings.sessionStallLimit
    session.startLimit = settings.startLimit
    if let plan = live.feedbackRingOut, let granted = session.unit.granted,
      plan.sampleRate != Double(granted.sampleRate)
    {
      throw .ringOutRate(planRate: Int(plan.sampleRate), deviceRate: granted.sampleRate)
    }
    tones = settings.tones.map { ToneTally(plans: $0.plans, repeatWindow: $0.repeatWindow) }
    if let toneSettings = settings.tones, let granted = session.unit.granted {
      do {
        decoder = try ToneDecoder(
          plans: toneSettings.plans, sampleRate: Double(granted.sampleRate),
          settings: toneSettings.detection)
      } catch { throw .tones(error) }
    }
    if let path = settings.recordingPath, let granted = session.unit.granted,
      let format = granted.inputFormat
    {
      do {
        recording = RecordingSink(
          try AudioFileWriter(
            path: path, sampleRate: Double(granted.sampleRate),
            channelCount: granted.inputChannelCount, encoding: format.fileEncoding))
      } catch { throw .recording(error) }
    }
  }

  /// A gap being bridged: where the stream stood and when audio last came.
  private struct Gap {
    var frame: Int64
    var lastAudio: Double
  }

  /// Runs the job until the observer stops it, its duration is reached,
  /// or a device fails for good, handing every event to `observer` and
  /// then to each of `stages` on the calling thread; ends the meter, the
  /// decoder and the recording (a stage's own end is its caller's).
  /// Throws when a lost device cannot be opened as it was, or will not
  /// start; a device lost while running is the outcome's `failure`.
  public func run(observer: some LiveJobObserver, stages: [any LiveJobStage] = [])
    throws(LiveJobError) -> Outcome
  {
    let rate = Double(processor.format.sampleRate)
    let reconnects = settings.recovery.reconnects
    var xruns = 0
    var lostFrames = 0
    var filledFrames: Int64 = 0
    var droppedRecordingFrames = 0
    var undecodedFrames = 0
    var gap: Gap?
    var stoppedWhileWaiting = false
    var handlers = LiveSession<Backend>.Handlers()
    let recording = self.recording
    var lossWatch = AudioLossWatch(sampleRate: rate)
    func handle(_ event: LiveJobEvent) {
      observer.handle(event)
      for stage in stages { stage.handle(event) }
    }
    func report(_ lost: AudioLossWatch.Loss, atFrame frames: Int64) {
      handle(.audioLost(time: Double(frames) / rate, seconds: lost.seconds, cause: lost.cause))
    }
    let measured = processor
    /// The stages' cycle, then the observer's say.
    func shouldStop() -> Bool {
      if !stages.isEmpty {
        let frames = Int64(measured.framesProcessed.load(ordering: .acquiring))
        for stage in stages { stage.cycleEnded(streamFrames: frames) }
      }
      return observer.shouldStop()
    }
    handlers.shouldStop = {
      let frames = Int64(measured.framesProcessed.load(ordering: .acquiring))
      if let lost = lossWatch.observe(frames: frames, at: MonotonicClock.seconds) {
        report(lost, atFrame: frames)
      }
      return recording?.failure != nil || shouldStop()
    }
    handlers.onEvent = { handle(.meter($0)) }
    // Stream frames the decoder has heard (frames its analysis ring
    // dropped, if the control thread fell seconds behind, come as silence).
    var decodedFrames = Int64(processor.framesProcessed.load(ordering: .acquiring))
    handlers.onInput = { [decoder, tones] samples in
      decoder?.process(samples) { event in
        tones?.admit(event) { handle(.tone($0)) }
      }
      decodedFrames += Int64(samples.count)
      if decoder != nil {
        for stage in stages { stage.decoded(throughFrame: decodedFrames) }
      }
    }
    let handsOver = settings.handsOverAudio
    handlers.onCaptured = { block in
      recording?.write(block)
      if handsOver {
        for stage in stages { stage.captured(block) }
      }
    }
    handlers.onXrun = {
      // A restarted playback stream can hold the loop up (a sound server's
      // idle sink starts it seconds late) while capture overflows.
      if $0 == .output { lossWatch.suspect(.underrun) }
      handle(.xrun(bus: $0, time: $1, lostFrames: $2))
    }
    handlers.onPause = {
      lossWatch.suspect(.pause)
      handle(.pause(time: $0, seconds: $1))
    }
    handlers.onConnectionsRestored = {
      handle(.connectionsRestored(time: $0, connections: $1))
    }
    handlers.onFeedback = { handle(.feedback($0)) }
    let fillsGaps = settings.recovery.fillsGaps
    let processor = self.processor
    handlers.onFirstAudio = {
      // The gap lasts from the last audio before the loss to the first
      // after it: reopening, and a server slow to start its stream, both count.
      guard let bridged = gap else { return }
      gap = nil
      let since =
        Double(Int64(processor.framesProcessed.load(ordering: .acquiring)) - bridged.frame) / rate
      let seconds = max(0, MonotonicClock.seconds - bridged.lastAudio - max(0, since))
      var filled = false
      if fillsGaps, let recording {
        let frames = Int64((seconds * rate).rounded())
        recording.writeSilence(frames: frames)
        filledFrames += frames
        filled = true
      }
      handle(.deviceBack(time: Double(bridged.frame) / rate, gap: seconds, filled: filled))
    }

    var outcome: LiveSession<Backend>.Outcome
    while true {
      do {
        session.cycleClock = cycleClock
        defer { cycleClock = session.cycleClock }
        outcome = try session.run(
          duration: settings.duration, endsJob: !reconnects, handlers: handlers)
      } catch { throw .device(error) }
      xruns += outcome.overruns + outcome.underruns
      lostFrames += outcome.lostFrames
      // Each opening prepares its rings afresh: count their losses now.
      droppedRecordingFrames += outcome.droppedRecordingFrames
      undecodedFrames += processor.analysis?.dropped.load(ordering: .relaxed) ?? 0
      guard reconnects, let failure = outcome.failure, failure.isDeviceLost else { break }
      handle(.deviceLost(time: outcome.duration, failure: failure))
      // A device lost again before its audio came back continues the same gap.
      if gap == nil {
        gap = Gap(
          frame: Int64(processor.framesProcessed.load(ordering: .acquiring)),
          lastAudio: outcome.lastProgress)
      }
      retired.append(session)
      let lostFormat = processor.format
      guard let back = reopen(until: shouldStop) else {
        stoppedWhileWaiting = true
        outcome.failure = nil
        break
      }
      if let granted = back.unit.granted,
        granted.sampleRate != lostFormat.sampleRate
          || (configuration.isInputEnabled && granted.inputChannelCount != lostFormat.channelCount)
      {
        recording?.close()
        throw .formatChanged(
          sampleRate: granted.sampleRate, channelCount: granted.inputChannelCount)
      }
      session = back
    }
    let endFrames = Int64(processor.framesProcessed.load(ordering: .acquiring))
    if let lost = lossWatch.finish(frames: endFrames, at: MonotonicClock.seconds) {
      report(lost, atFrame: endFrames)
    }
    // A job that stopped while it waited, or ended on another failure,
    // still ends its meter.
    if reconnects && (stoppedWhileWaiting || outcome.failure != nil) {
      processor.finishMeter { handle(.meter($0)) }
    }
    recording?.close()
    decoder?.finish { event in tones?.admit(event) { handle(.tone($0)) } }
    tones?.finish { handle(.tone($0)) }
    return Outcome(
      duration: Double(processor.framesProcessed.load(ordering: .acquiring)) / rate,
      recordedFrames: recording?.recordedFrames ?? 0, filledFrames: filledFrames,
      droppedRecordingFrames: droppedRecordingFrames, xruns: xruns, lostFrames: lostFrames,
      undecodedFrames: undecodedFrames,
      wasStoppedByCaller: outcome.wasStoppedByCaller || stoppedWhileWaiting,
      failure: outcome.failure, recordingFailure: recording?.failure)
  }

  /// Opens the devices again every `retryInterval` seconds until they
  /// open (a session continuing the job) or `shouldStop` says so (`nil`).
  private func reopen(until shouldStop: () -> Bool) -> LiveSession<Backend>? {
    while !shouldStop() {
      if let back = try? LiveSession(
        configuration: configuration, backend: makeBackend(), processor: processor)
      {
        back.stallLimit = settings.sessionStallLimit
        back.startLimit = settings.startLimit
        return back
      }
      usleep(useconds_t(settings.recovery.retryInterval * 1_000_000))
    }
    return nil
  }
}

extension LiveJob where Backend == DeviceBackend {
  /// A live job on the devices `configuration` names (ALSA, JACK or
  /// PipeWire, as `DeviceBackend` routes them).
  public convenience init(configuration: DuplexConfiguration, settings: LiveJobSettings)
    throws(LiveJobError)
  {
    try self.init(configuration: configuration, settings: settings) { DeviceBackend() }
  }
}

extension SampleFormat {
  /// The file encoding that keeps every bit of this device format.
  public var fileEncoding: AudioFileEncoding {
    switch self {
    case .s16: return .pcm16
    case .s24, .s24Packed: return .pcm24
    case .s32: return .pcm32
    case .float: return .float
    }
  }
}
