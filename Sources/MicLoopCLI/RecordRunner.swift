import AudioFiles
import Console
import DuplexIO
import MicLoopKit
import ToneDecoding
import TonePlans

/// Runs `record` on a capture device: a live session whose recording ring,
/// talk events, mono input and xruns feed a `Recorder`
/// (`LiveRecordingFeed`), with `--reconnect` bridging a lost device as a
/// gap on the timeline. Control thread.
enum RecordRunner {
  /// Seconds of captured audio the processor's ring holds while the
  /// control thread is busy (a slow disk, a sync, a hook starting).
  static let recordingBuffer = 20.0

  static func run(
    configuration: DuplexConfiguration, settings: RecorderSettings,
    toneSettings: ToneDetectionSettings, directory: String, duration: Double?,
    printer: RecordPrinter, hook: CloseHook?, recovery: DeviceRecovery
  ) throws {
    var live = LiveSettings()
    if case .talk = settings.trigger {
      live.meter = settings.meter
    } else {
      live.meter = nil
    }
    live.isRecording = true
    live.recordingBuffer = recordingBuffer
    live.isAnalyzing = !settings.decodedPlans.isEmpty
    var session: LiveSession<DeviceBackend>
    do {
      session = try LiveSession(
        configuration: configuration, backend: DeviceBackend(), settings: live)
    } catch {
      throw CommandFailure(message: error.commandLineMessage)
    }
    guard let granted = session.unit.granted else {
      throw CommandFailure(message: "the capture device granted no format")
    }
    let rate = Double(granted.sampleRate)
    let decoder: ToneDecoder?
    if live.isAnalyzing {
      do {
        decoder = try ToneDecoder(
          plans: settings.decodedPlans, sampleRate: rate, settings: toneSettings)
      } catch { throw CommandFailure(message: error.commandLineMessage()) }
    } else {
      decoder = nil
    }
    let clock = StreamClock(sampleRate: rate)
    printer.attach(sampleRate: rate, clock: clock)
    let recorder: Recorder
    do {
      recorder = try Recorder(
        settings: settings, sampleRate: rate, channelCount: granted.inputChannelCount,
        encoding: settings.encoding ?? .pcm16, directory: directory, clock: clock,
        source: configuration.captureDevice
      ) { event in
        printer.show(event)
        if case .recording(let file) = event { hook?.run(file, recorderClock: clock) }
      }
    } catch { throw CommandFailure(message: error.description) }
    let feed = LiveRecordingFeed(recorder: recorder, processor: session.processor, decoder: decoder)
    // Sessions of devices that were lost: kept, never torn down (a driver
    // that hung may never return from closing).
    var retired = [LiveSession<DeviceBackend>]()
    var failure: DuplexError?
    while true {
      let outcome: LiveSession<DeviceBackend>.Outcome
      do {
        outcome = try session.run(
          duration: duration, recorder: nil, endsJob: !recovery.reconnects,
          shouldStop: {
            StandardOutput.checkReader()
            feed.pump()
            hook?.poll()
            printer.status(recorder: recorder, now: MonotonicClock.seconds)
            return interruptRequested.load(ordering: .relaxed)
          },
          onEvent: feed.meterEvent,
          onInput: feed.input,
          onXrun: { bus, time, lost in feed.xrun(bus, time: time, lostFrames: lost) })
      } catch {
        feed.finish()
        throw CommandFailure(message: error.commandLineMessage)
      }
      feed.pump()
      guard recovery.reconnects, let lost = outcome.failure, lost.isDeviceLost else {
        failure = outcome.failure
        break
      }
      printer.deviceLost(reason: lost.description)
      retired.append(session)
      let format = session.processor.format
      guard
        let back = DeviceReturn.wait(
          configuration: configuration, processor: session.processor,
          shouldStop: {
            feed.recorder.update()
            hook?.poll()
            return interruptRequested.load(ordering: .relaxed)
          })
      else { break }
      let gap = MonotonicClock.seconds - outcome.lastProgress
      if let granted = back.unit.granted,
        granted.sampleRate != format.sampleRate || granted.inputChannelCount != format.channelCount
      {
        feed.finish()
        throw CommandFailure(
          message:
            "the device came back as \(granted.sampleRate) Hz, \(granted.inputChannelCount) channels, not as it was; start again"
        )
      }
      feed.deviceLost(seconds: gap, reason: lost.description)
      printer.deviceBack(gap: gap)
      session = back
    }
    session.processor.finishMeter { feed.meterEvent($0) }
    feed.finish()
    printer.clearStatus()
    StandardOutput.flush()
    hook?.finish()
    _ = retired
    if let failure {
      throw CommandFailure(
        message: failure.commandLineMessage + "; the recordings so far are in \(directory)")
    }
  }
}
