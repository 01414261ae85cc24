import DuplexIO

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a live job on ALSA devices from the control thread: starts the
/// unit, then about 50 times a second hands meter events to the caller,
/// writes the recording, reports xruns, and stops on Ctrl-C, after the
/// duration, or when a device fails (the recording stays valid).
public final class LiveSession {
  public typealias Unit = DuplexUnit<ALSADevicePair, LiveProcessor>

  /// How a live job ended.
  public struct Outcome: Sendable {
    /// Seconds of input processed.
    public var duration: Double
    /// Frames written to the recording.
    public var recordedFrames: Int64
    /// Frames the recording lost because the disk could not keep up.
    public var droppedRecordingFrames: Int
    /// Capture overruns and playback underruns.
    public var overruns: Int
    public var underruns: Int
    /// Whether Ctrl-C (or SIGTERM) ended the job.
    public var wasInterrupted: Bool
    /// The device error that ended the job, if any.
    public var failure: ALSAError?
    /// A recording error that ended the job, if any.
    public var recordingFailure: AudioFileError?
  }

  /// A bus in an xrun notice.
  public enum Bus: String, Sendable { case input, output }

  public let unit: Unit
  public let processor: LiveProcessor
  public let configuration: DuplexConfiguration

  /// Opens and configures the devices (nothing runs yet).
  public init(configuration: DuplexConfiguration, settings: LiveSettings) throws(ALSAError) {
    self.configuration = configuration
    let format = StreamFormat(
      sampleRate: configuration.sampleRate,
      channelCount: configuration.isInputEnabled ? configuration.inputChannelCount : 1)
    let maximumPeriod = max(16_384, configuration.periodFrames * 4)
    processor = LiveProcessor(
      format: format, outputChannelCount: configuration.outputChannelCount,
      maximumPeriod: maximumPeriod,
      settings: settings)
    unit = DuplexUnit(configuration: configuration, client: processor)
    try unit.initialize()
    if let granted = unit.granted, granted.periodFrames > maximumPeriod {
      throw ALSAError(
        operation: "set period size", device: configuration.captureDevice,
        value: "\(granted.periodFrames) frames granted, at most \(maximumPeriod) supported",
        code: -EINVAL)
    }
  }

  /// Runs until Ctrl-C, `duration` seconds of input, a device failure, or
  /// `shouldStop` returning true. `onEvent` gets meter events, `onInput`
  /// the mono input (when analysing), `onXrun` xruns, `onTick` is called
  /// every cycle (for keys and redraws).
  public func run(
    duration: Double?, recorder: AudioFileWriter?, onEvent: (MeterEvent) -> Void,
    onInput: (UnsafeBufferPointer<Float>) -> Void = { _ in },
    onXrun: (Bus, Double) -> Void = { _, _ in }, onTick: () -> Bool = { false }
  ) throws(ALSAError) -> Outcome {
    let rate = Double(configuration.sampleRate)
    let channels = processor.format.channelCount
    let frameLimit = duration.map { Int64(($0 * rate).rounded()) }
    var recorded: Int64 = 0
    var recordingFailure: AudioFileError?
    var seenOverruns = 0
    var seenUnderruns = 0
    var interrupted = false

    var analysed: Int64 = 0
    func drain() {
      processor.events.drain { events in
        for event in events { onEvent(event.meterEvent) }
      }
      processor.analysis?.drain { samples in
        var count = samples.count
        if let frameLimit { count = Int(max(0, min(Int64(count), frameLimit - analysed))) }
        analysed += Int64(count)
        if count > 0 { onInput(UnsafeBufferPointer(rebasing: samples[..<count])) }
      }
      guard let recorder, let ring = processor.recording, recordingFailure == nil else { return }
      ring.drain { samples in
        var frames = Int64(samples.count / channels)
        if let frameLimit { frames = min(frames, frameLimit - recorded) }
        guard frames > 0 else { return }
        do throws(AudioFileError) {
          try recorder.write(samples.baseAddress!, frameCount: Int(frames))
          recorded += frames
        } catch {
          recordingFailure = error
        }
      }
    }

    try unit.start()
    while true {
      usleep(20_000)
      drain()
      let time = Double(processor.framesProcessed.load(ordering: .acquiring)) / rate
      let overruns = unit.statistics.overruns.load(ordering: .relaxed)
      let underruns = unit.statistics.underruns.load(ordering: .relaxed)
      for _ in seenOverruns..<overruns { onXrun(.input, time) }
      for _ in seenUnderruns..<underruns { onXrun(.output, time) }
      seenOverruns = overruns
      seenUnderruns = underruns
      if onTick() { break }
      if interruptRequested.load(ordering: .relaxed) {
        interrupted = true
        break
      }
      if let frameLimit, Int64(time * rate) >= frameLimit { break }
      if !unit.isRunning || recordingFailure != nil { break }
    }
    unit.stop()
    drain()
    processor.finishMeter(emit: onEvent)
    recorder?.close()
    return Outcome(
      duration: Double(processor.framesProcessed.load(ordering: .acquiring)) / rate,
      recordedFrames: recorded,
      droppedRecordingFrames: (processor.recording?.dropped.load(ordering: .relaxed) ?? 0)
        / channels,
      overruns: unit.statistics.overruns.load(ordering: .relaxed),
      underruns: unit.statistics.underruns.load(ordering: .relaxed), wasInterrupted: interrupted,
      failure: unit.failure, recordingFailure: recordingFailure)
  }
}
