import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import Recording
import ToneDecoding
import TonePlans

/// Runs `record` on a capture device: a live job (`LiveJob`, which also
/// bridges a lost device with `--reconnect`) whose captured audio, talk
/// events, tones and xruns feed a `Recorder` (its stage, `RecorderStage`);
/// this only prints. Control thread.
enum RecordRunner {
  /// Seconds of captured audio the capture ring holds while the control
  /// thread is busy (a slow disk, a sync, a hook starting).
  static let captureBuffer = 20.0

  static func run(
    configuration: DuplexConfiguration, settings: RecorderSettings,
    toneSettings: ToneDetectionSettings, directory: String, duration: Double?,
    printer: RecordPrinter, hook: CloseHook?, recovery: DeviceRecovery,
    station: StationOptions? = nil
  ) throws {
    var settings = settings
    // After a stall the whole capture buffer may arrive in one cycle.
    settings.largestArrival = captureBuffer
    let jobSettings = RecorderStage.jobSettings(
      for: settings, detection: toneSettings, duration: duration, recovery: recovery,
      captureBuffer: captureBuffer, showsLevels: station != nil)
    let job: LiveJob<DeviceBackend>
    do {
      job = try LiveJob(configuration: configuration, settings: jobSettings)
    } catch {
      throw CommandFailure(message: error.commandLineMessage)
    }
    guard let granted = job.granted else {
      throw CommandFailure(message: "the capture device granted no format")
    }
    let rate = Double(granted.sampleRate)
    let clock = StreamClock(sampleRate: rate)
    printer.attach(sampleRate: rate, clock: clock)
    let server = try station?.start(json: printer.mode == .json)
    defer { server?.stop() }
    let reporter = server.map { StationReporter(feed: $0.feed) }
    let recorder: Recorder
    do {
      recorder = try Recorder(
        settings: settings, sampleRate: rate, channelCount: granted.inputChannelCount,
        encoding: settings.encoding ?? .pcm16, directory: directory, clock: clock,
        source: configuration.captureDevice
      ) { event in
        // One encoding of the event, for the JSON output and the station alike.
        let line =
          printer.mode == .json || reporter != nil
          ? event.json(sampleRate: rate, clock: clock) : nil
        if let line { reporter?.take(event, line: line) }
        printer.show(event, line: line)
        if case .recording(let file) = event { hook?.run(file, recorderClock: clock) }
      }
    } catch { throw CommandFailure(message: error.commandLineMessage) }
    let stage = RecorderStage(recorder: recorder)
    let observer = LiveJobCallbacks(handle: { Self.show($0, printer: printer, station: reporter) })
    {
      StandardOutput.checkReader()
      hook?.poll()
      let now = MonotonicClock.seconds
      printer.status(recorder: recorder, now: now)
      reporter?.noteStorage(of: recorder, now: now)
      return interruptRequested.load(ordering: .relaxed)
    }
    let outcome: LiveJob<DeviceBackend>.Outcome
    do {
      outcome = try job.run(observer: observer, stages: [stage])
    } catch {
      stage.finish()
      printer.clearStatus()
      hook?.finish()
      throw CommandFailure(
        message: error.commandLineMessage + "; the recordings so far are in \(directory)")
    }
    stage.finish()
    printer.clearStatus()
    StandardOutput.flush()
    hook?.finish()
    if let failure = outcome.failure {
      throw CommandFailure(
        message: failure.commandLineMessage + "; the recordings so far are in \(directory)")
    }
    try Record.checkNothingLost(recorder)
  }

  /// Tells the user (and the station) what the live job reports before the
  /// recorder takes it: the device's comings and goings; levels and talk
  /// go to the station, which counts the rest (the recorder reports xruns,
  /// gaps and tones in its own lines). Control thread.
  static func show(_ event: LiveJobEvent, printer: RecordPrinter, station: StationReporter?) {
    if let station {
      switch event {
      case .meter, .deviceLost, .deviceBack, .connectionsRestored:
        station.take(event, line: LiveEventJSON.line(for: event))
      default: station.count(event)
      }
    }
    switch event {
    case .deviceLost(let time, let failure):
      printer.deviceLost(time: time, reason: failure.description)
    case .deviceBack(let time, let gap, _): printer.deviceBack(time: time, gap: gap)
    case .connectionsRestored(let time, let connections):
      printer.connectionsRestored(time: time, connections)
    default: break
    }
  }
}
