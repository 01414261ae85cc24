import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Why a unit's audio loop ended (RemoteIO's `IsRunning` going false).
public enum StopReason: Sendable, Equatable {
  /// Its owner called `stop`.
  case requested
  /// A device failed or went away (`error.kind` says which: `.deviceLost`,
  /// `.serverUnreachable` …).
  case failed(DuplexError)
}

/// A RemoteIO-style duplex I/O unit: a capture bus (1) and a playback bus
/// (0) driven by one audio thread that, every period, calls the client's
/// input callback (the client renders the captured period into its own
/// buffer) and then its render callback (the client fills the period to
/// play). Generic over the backend and the client so nothing on the audio
/// thread goes through dynamic dispatch.
///
/// Lifecycle (control thread): `initialize` (open, negotiate, allocate, and
/// `client.prepare(for:)`) → `start` → `stop` → `uninitialize`.
/// Reconfiguring needs `uninitialize` first. `statistics`, `isRunning`,
/// `failure` and `waitUntilStopped` may be used from any thread; `onStop`
/// is called on a thread of the unit's own, never the audio thread.
public final class DuplexUnit<Backend: DuplexBackend, Client: DuplexClient>: @unchecked Sendable {
  public let configuration: DuplexConfiguration
  public let backend: Backend
  public let client: Client
  /// Counters kept by the audio thread.
  public let statistics = IOStatistics()
  /// What the devices granted; set by `initialize`.
  public private(set) var granted: GrantedConfiguration?
  /// The formats the client was prepared for; set by `initialize`.
  public private(set) var format: IOFormat?
  /// Whether the audio thread got real-time priority; set by `start`.
  public private(set) var isRealtime = false
  /// Called once each time the loop ends, with the reason, on a thread of
  /// the unit's own (not the audio thread). Set before `start`. It may call
  /// `stop`; `stop` waits for it to return.
  public var onStop: (@Sendable (StopReason) -> Void)?

  private let stopRequested = Atomic<Bool>(false)
  private let keepsPlayback = Atomic<Bool>(false)
  private let running = Atomic<Bool>(false)
  private let failureCode = Atomic<Int32>(0)
  private let failureOperation = Atomic<Int>(0)
  private let loopEnded = EventSignal()
  private let halted = EventSignal()
  private var thread: RealtimeThread?
  private var watcher: RealtimeThread?
  private var captureRaw = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 16)
  private var playbackRaw = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 16)
  private var outputBuffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 0)

  public init(configuration: DuplexConfiguration, backend: Backend, client: Client) {
    self.configuration = configuration
    self.backend = backend
    self.client = client
  }

  deinit {
    stop()
    uninitialize()
    captureRaw.deallocate()
    playbackRaw.deallocate()
    outputBuffer.deallocate()
  }

  /// Opens and configures the devices, allocates every buffer, and tells
  /// the client the granted formats.
  public func initialize() throws(DuplexError) {
    guard granted == nil else { return }
    // Plugin threads started by the open share the loop's priority, one below it.
    let priority =
      configuration.alsa.usesRealtimePriority
      ? max(1, configuration.alsa.realtimePriority - 1) : nil
    let granted = try withRealtimePriority(priority) { () throws(DuplexError) in
      try backend.open(configuration)
    }
    self.granted = granted
    let period = granted.periodFrames
    captureRaw.deallocate()
    playbackRaw.deallocate()
    outputBuffer.deallocate()
    // Room for a period plus drift correction's extra frames, 4 bytes a sample.
    let captureBytes = 2 * period * granted.inputChannelCount * 4
    captureRaw = .allocate(byteCount: captureBytes, alignment: 16)
    captureRaw.initializeMemory(as: UInt8.self, repeating: 0, count: captureBytes)
    let playbackBytes = 2 * period * granted.outputChannelCount * 4
    playbackRaw = .allocate(byteCount: playbackBytes, alignment: 16)
    playbackRaw.initializeMemory(as: UInt8.self, repeating: 0, count: playbackBytes)
    outputBuffer = .allocate(capacity: 2 * period * granted.outputChannelCount)
    outputBuffer.initialize(repeating: 0)
    let format = IOFormat(
      input: granted.inputFormat.map { _ in
        StreamFormat(sampleRate: granted.sampleRate, channelCount: granted.inputChannelCount)
      },
      output: granted.outputFormat.map { _ in
        StreamFormat(sampleRate: granted.sampleRate, channelCount: granted.outputChannelCount)
      },
      maximumFrameCount: period)
    self.format = format
    client.prepare(for: format)
  }

  /// Pre-fills playback, starts the devices and the audio thread.
  public func start() throws(DuplexError) {
    guard let granted, thread == nil else { return }
    stopRequested.store(false, ordering: .releasing)
    keepsPlayback.store(false, ordering: .releasing)
    failureCode.store(0, ordering: .releasing)
    loopEnded.reset()
    halted.reset()
    if case .failed(let code) = backend.start() {
      throw backend.error(code: code, during: .start)
    }
    if configuration.alsa.locksMemory { _ = lockMemory() }
    running.store(true, ordering: .releasing)
    do {
      let priority =
        configuration.alsa.usesRealtimePriority ? configuration.alsa.realtimePriority : nil
      thread = try RealtimeThread(realtimePriority: priority) { [self] in runLoop(granted) }
      isRealtime = thread?.isRealtime ?? false
    } catch {
      running.store(false, ordering: .releasing)
      backend.halt()
      throw error
    }
    if let onStop {
      watcher = try? RealtimeThread(realtimePriority: nil) { [self] in
        _ = loopEnded.wait(timeout: nil)
        onStop(stopReason)
      }
    }
  }

  /// Stops the audio thread and the devices; returns within about a period.
  ///
  /// A driver that hangs while halting (the PulseAudio plugin can deadlock
  /// when its server dies) is abandoned after `haltTimeout`: the thread is
  /// detached, the devices are left open, and `isWedged` becomes true.
  public func stop() {
    guard let thread else { return }
    stopRequested.store(true, ordering: .releasing)
    backend.wake()
    if halted.wait(timeout: Self.haltTimeout) {
      thread.join()
    } else {
      thread.detach()
      isWedged = true
    }
    self.thread = nil
    if let watcher {
      // The loop has ended (or was abandoned): let the watcher report it.
      loopEnded.signal()
      if watcher.isCurrent { watcher.detach() } else { watcher.join() }
      self.watcher = nil
    }
  }

  /// Stops rendering, then returns once everything already queued has been
  /// played (for commands that play: the last sample is heard).
  public func stopAfterDrain() {
    keepsPlayback.store(true, ordering: .releasing)
    stop()
    guard !isWedged else { return }
    backend.drain()
    backend.halt()
  }

  /// Releases the devices.
  public func uninitialize() {
    guard granted != nil, !isWedged else { return }
    backend.close()
    granted = nil
    format = nil
  }

  /// Seconds `stop` waits for the devices to halt before abandoning them.
  public static var haltTimeout: Double { 2 }

  /// Whether a device hung while halting and was abandoned by `stop`.
  public private(set) var isWedged = false

  /// Whether the audio loop is running.
  public var isRunning: Bool { running.load(ordering: .acquiring) }

  /// Waits until the audio loop ends (by `stop` or a failure); true when it
  /// has, false when `timeout` seconds passed first. Any thread but the
  /// audio thread; returns at once when the unit never started.
  @discardableResult
  public func waitUntilStopped(timeout: Double?) -> Bool {
    guard isRunning else { return true }
    return loopEnded.wait(timeout: timeout)
  }

  /// The error that ended the loop, if one did.
  public var failure: DuplexError? {
    let code = failureCode.load(ordering: .acquiring)
    guard code != 0 else { return nil }
    let operation = LoopOperation(rawValue: failureOperation.load(ordering: .acquiring)) ?? .wait
    return backend.error(code: code, during: operation)
  }

  private var stopReason: StopReason {
    failure.map { .failed($0) } ?? .requested
  }

  // MARK: The audio thread

  private enum Step { case proceed, retry, end }

  /// What the loop carries from one period to the next.
  private struct LoopState {
    var sampleTime: Int64 = 0
    var flags: IOFlags = []
    var isInputDelivered = false
    var isDriftCorrected = false
  }

  private func fail(_ code: Int32, _ operation: LoopOperation) {
    failureOperation.store(operation.rawValue, ordering: .relaxed)
    failureCode.store(max(1, code), ordering: .releasing)
  }

  /// The one place a backend result is judged: go on, try the period again
  /// (woken, or recovered from an xrun), or end the loop.
  private func judge(
    _ result: IOResult, _ operation: LoopOperation, xrun flag: IOFlags, settlingFrames: Int64,
    period: Int, state: inout LoopState
  ) -> Step {
    switch result {
    case .ready: return .proceed
    case .woken: return .retry
    case .failed(let code):
      fail(code, operation)
      return .end
    case .xrun:
      // Only the speaker settles: a capture restart loses what was captured.
      if flag == .outputUnderrun && state.sampleTime < settlingFrames {
        statistics.settlingXruns.add(1, ordering: .relaxed)
      } else if flag == .outputUnderrun {
        statistics.underruns.add(1, ordering: .relaxed)
      } else {
        statistics.overruns.add(1, ordering: .relaxed)
      }
      state.flags.insert(flag)
      // A period already given to the client keeps its place in time.
      if state.isInputDelivered { state.sampleTime += Int64(period) }
      // An underrun is the speaker's alone: what capture holds is kept.
      let recovered = flag == .outputUnderrun ? backend.restartPlayback() : backend.restartBoth()
      if case .failed(let code) = recovered {
        fail(code, .restart)
        return .end
      }
      return .retry
    }
  }

  private func runLoop(_ granted: GrantedConfiguration) {
    defer {
      // Tell the owner first: halting a dead device may hang.
      running.store(false, ordering: .releasing)
      loopEnded.signal()
      // Dropping playback would discard what is queued; a drain plays it.
      if !keepsPlayback.load(ordering: .acquiring) || failureCode.load(ordering: .acquiring) != 0 {
        backend.halt()
      }
      halted.signal()
    }
    let period = granted.periodFrames
    let hasInput = granted.inputFormat != nil
    let outputChannels = granted.outputChannelCount
    let outputSamples = period * outputChannels
    let settlingFrames = Int64(configuration.settlingTime * Double(granted.sampleRate))
    var state = LoopState()
    var drift = DriftTracker(period: period, isActive: hasInput && granted.outputFormat != nil)
    while !stopRequested.load(ordering: .acquiring) {
      state.isInputDelivered = false
      let waited = backend.waitForPeriod()
      switch judge(
        waited, .wait, xrun: .inputOverrun, settlingFrames: settlingFrames, period: period,
        state: &state)
      {
      case .proceed: break
      case .retry: continue
      case .end: return
      }
      if let format = granted.inputFormat {
        let got = backend.read(captureRaw, frames: period)
        switch judge(
          got, .capture, xrun: .inputOverrun, settlingFrames: settlingFrames, period: period,
          state: &state)
        {
        case .proceed: break
        case .retry: continue
        case .end: return
        }
        let stamp = AudioTimeStamp(sampleTime: state.sampleTime, hostTime: backend.hostTime())
        client.inputAvailable(
          CapturedInput(
            raw: captureRaw, format: format, frameCount: period,
            channelCount: granted.inputChannelCount),
          timeStamp: stamp, flags: state.flags)
        state.isInputDelivered = true
      }
      if let format = granted.outputFormat {
        let stamp = AudioTimeStamp(
          sampleTime: state.sampleTime,
          hostTime: hasInput ? backend.hostTime() : MonotonicClock.now())
        let base = outputBuffer.baseAddress!
        base.update(repeating: 0, count: outputSamples)
        var isSilence = true
        client.renderOutput(
          OutputPeriod(
            samples: UnsafeMutableBufferPointer(start: base, count: outputSamples),
            frameCount: period, channelCount: outputChannels),
          timeStamp: stamp, flags: state.flags, isSilence: &isSilence)
        // Follow a playback clock that runs apart from the capture clock.
        let adjustment = drift.adjustment()
        let frames = period - adjustment
        if adjustment < 0 {
          // Repeat the last frame to stretch the period.
          for frame in period..<frames {
            for channel in 0..<outputChannels {
              base[frame * outputChannels + channel] =
                base[(period - 1) * outputChannels + channel]
            }
          }
        }
        if adjustment != 0 {
          statistics.driftCorrectedFrames.add(adjustment, ordering: .relaxed)
          state.isDriftCorrected = true
        }
        if isSilence && adjustment >= 0 {
          playbackRaw.initializeMemory(
            as: UInt8.self, repeating: 0, count: frames * outputChannels * format.byteCount)
        } else {
          format.encode(base, into: playbackRaw, count: frames * outputChannels)
        }
        let written = backend.write(playbackRaw, frames: frames)
        switch judge(
          written, .playback, xrun: .outputUnderrun, settlingFrames: settlingFrames,
          period: period, state: &state)
        {
        case .proceed: break
        case .retry: continue
        case .end: return
        }
        let delay = backend.outputDelay()
        drift.observe(delay: delay)
        if delay > statistics.maximumOutputDelay.load(ordering: .relaxed) {
          statistics.maximumOutputDelay.store(delay, ordering: .relaxed)
        }
      }
      // The next period tells the client what this one corrected.
      state.flags = state.isDriftCorrected ? .driftCorrected : []
      state.isDriftCorrected = false
      state.sampleTime += Int64(period)
      statistics.periods.add(1, ordering: .relaxed)
    }
  }
}

extension DuplexUnit where Backend == ALSADevicePair {
  /// A unit on ALSA devices.
  public convenience init(configuration: DuplexConfiguration, client: Client) {
    self.init(configuration: configuration, backend: ALSADevicePair(), client: client)
  }
}
