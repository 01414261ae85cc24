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
/// (0). Every period the unit calls the client's input callback (the client
/// renders the captured period into its own buffer) and then its render
/// callback (the client fills the period to play). On a polled backend
/// (ALSA) one audio thread of the unit's own waits for the periods; on a
/// callback-driven backend (JACK, PipeWire) the sound server's real-time
/// thread runs each period inside its process callback. Either way the
/// client sees the same contract: input before output in the same period,
/// time stamps, flags on the period after a loss, `statistics`, `onStop`.
/// Generic over the backend and the client so nothing on the audio thread
/// goes through dynamic dispatch.
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

  let stopRequested = Atomic<Bool>(false)
  let keepsPlayback = Atomic<Bool>(false)
  let running = Atomic<Bool>(false)
  let failureCode = Atomic<Int32>(0)
  let failureOperation = Atomic<Int>(0)
  /// Whether a server's thread is inside `runCycle` (callback-driven backends).
  let isInCycle = Atomic<Bool>(false)
  let loopEnded = EventSignal()
  let halted = EventSignal()
  private var thread: RealtimeThread?
  private var watcher: RealtimeThread?
  /// The handler a callback-driven backend calls; lives as long as the
  /// unit, since a backend may hold it until it is closed.
  private lazy var cycleRunner = CycleRunner(unit: self)
  /// Whether the unit runs on a server's cycles (started, not yet stopped).
  private var isServerDriven = false
  var captureRaw = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 16)
  var playbackRaw = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 16)
  var outputBuffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 0)
  /// What the audio thread carries from one period to the next; touched
  /// only by the thread running periods (set up by `start` before it runs).
  var loop = LoopState()

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
    // Room for a period plus drift correction's extra frames, or for the
    // largest cycle a server may switch to, 4 bytes a sample.
    let frames = max(2 * granted.periodFrames, granted.maximumPeriodFrames)
    captureRaw.deallocate()
    playbackRaw.deallocate()
    outputBuffer.deallocate()
    let captureBytes = frames * granted.inputChannelCount * 4
    captureRaw = .allocate(byteCount: captureBytes, alignment: 16)
    captureRaw.initializeMemory(as: UInt8.self, repeating: 0, count: captureBytes)
    let playbackBytes = frames * granted.outputChannelCount * 4
    playbackRaw = .allocate(byteCount: playbackBytes, alignment: 16)
    playbackRaw.initializeMemory(as: UInt8.self, repeating: 0, count: playbackBytes)
    outputBuffer = .allocate(capacity: frames * granted.outputChannelCount)
    outputBuffer.initialize(repeating: 0)
    let format = IOFormat(
      input: granted.inputFormat.map { _ in
        StreamFormat(sampleRate: granted.sampleRate, channelCount: granted.inputChannelCount)
      },
      output: granted.outputFormat.map { _ in
        StreamFormat(sampleRate: granted.sampleRate, channelCount: granted.outputChannelCount)
      },
      maximumFrameCount: granted.maximumPeriodFrames,
      loopDelayFrames: granted.isServerCycle ? granted.periodFrames : granted.loopBufferFrames)
    self.format = format
    client.prepare(for: format)
  }

  /// Pre-fills playback, starts the devices and the audio thread (or, on a
  /// callback-driven backend, hands the periods to the server's thread).
  public func start() throws(DuplexError) {
    guard let granted, thread == nil, !isServerDriven else { return }
    stopRequested.store(false, ordering: .sequentiallyConsistent)
    keepsPlayback.store(false, ordering: .releasing)
    failureCode.store(0, ordering: .releasing)
    loopEnded.reset()
    halted.reset()
    loop = LoopState(
      granted: granted, settlingTime: configuration.settlingTime,
      isCallbackDriven: backend.isCallbackDriven)
    if backend.isCallbackDriven {
      try startCycles()
    } else {
      try startThread(granted)
    }
    if let onStop {
      watcher = try? RealtimeThread(realtimePriority: nil) { [self] in
        _ = loopEnded.wait(timeout: nil)
        onStop(stopReason)
      }
    }
  }

  private func startThread(_ granted: GrantedConfiguration) throws(DuplexError) {
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
  }

  private func startCycles() throws(DuplexError) {
    if configuration.alsa.locksMemory { _ = lockMemory() }
    isServerDriven = true
    running.store(true, ordering: .releasing)
    if case .failed(let code) = backend.start(calling: cycleRunner) {
      running.store(false, ordering: .releasing)
      isServerDriven = false
      backend.halt()
      throw backend.error(code: code, during: .start)
    }
    isRealtime = backend.isServerThreadRealtime
  }

  /// Stops the audio thread and the devices; returns within about a period.
  ///
  /// A driver that hangs while halting (the PulseAudio plugin can deadlock
  /// when its server dies) is abandoned after `haltTimeout` (`lostHaltTimeout`
  /// for a device taken to be lost): the thread is
  /// detached, the devices are left open, and `isWedged` becomes true.
  public func stop(deviceLost: Bool = false) {
    let haltWait = deviceLost ? lostHaltTimeout : Self.haltTimeout
    if isServerDriven {
      stopCycles(haltWait: haltWait)
    } else {
      guard let thread else { return }
      stopRequested.store(true, ordering: .releasing)
      backend.wake()
      if halted.wait(timeout: haltWait) {
        thread.join()
      } else {
        thread.detach()
        isWedged = true
      }
      self.thread = nil
    }
    if let watcher {
      // The loop has ended (or was abandoned): let the watcher report it.
      loopEnded.signal()
      if watcher.isCurrent { watcher.detach() } else { watcher.join() }
      self.watcher = nil
    }
  }

  /// Stops a callback-driven backend's periods: no cycle calls the client
  /// once this returns; the server plays silence. The streams are halted
  /// too unless a drain is to follow (and no failure ended them).
  private func stopCycles(haltWait: Double) {
    stopRequested.store(true, ordering: .sequentiallyConsistent)
    // A cycle already inside the client finishes within a period.
    let deadline = MonotonicClock.seconds + haltWait
    while isInCycle.load(ordering: .sequentiallyConsistent) && MonotonicClock.seconds < deadline {
      usleep(100)
    }
    running.store(false, ordering: .releasing)
    loopEnded.signal()
    let drains =
      keepsPlayback.load(ordering: .acquiring) && failureCode.load(ordering: .acquiring) == 0
    if !drains { haltOffThread(haltWait: haltWait) }
    isServerDriven = false
  }

  /// Halts the backend on a thread of its own and waits at most
  /// `haltTimeout` for it: a server that died may never answer.
  private func haltOffThread(haltWait: Double) {
    halted.reset()
    guard
      let helper = try? RealtimeThread(
        realtimePriority: nil,
        body: { [self] in
          backend.halt()
          halted.signal()
        })
    else {
      backend.halt()
      return
    }
    if halted.wait(timeout: haltWait) {
      helper.join()
    } else {
      helper.detach()
      isWedged = true
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

  /// The same for devices taken to be lost (`stop(deviceLost: true)`):
  /// `lostHaltPeriods` periods, at least `leastLostHaltTimeout`. A halt
  /// takes a period or two; one that takes longer has hung on a dead
  /// server, and every second spent on it delays reopening when the
  /// server is back.
  public var lostHaltTimeout: Double {
    guard let granted, granted.sampleRate > 0 else { return Self.leastLostHaltTimeout }
    let periods = Self.lostHaltPeriods * Double(granted.periodFrames) / Double(granted.sampleRate)
    return min(Self.haltTimeout, max(Self.leastLostHaltTimeout, periods))
  }
  public static var leastLostHaltTimeout: Double { 0.5 }
  public static var lostHaltPeriods: Double { 4 }

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

  /// The handler a callback-driven backend calls: forwards to the unit's
  /// own period code, so the unit's callback methods stay out of its API.
  private final class CycleRunner: ServerCycleHandler {
    unowned let unit: DuplexUnit

    init(unit: DuplexUnit) { self.unit = unit }

    func runCycle(frames: Int, losses: CycleLosses) {
      unit.runCycle(frames: frames, losses: losses)
    }

    func serverEnded(code: Int32) { unit.serverEnded(code: code) }
  }
}

extension DuplexUnit where Backend == ALSADevicePair {
  /// A unit on ALSA devices.
  public convenience init(configuration: DuplexConfiguration, client: Client) {
    self.init(configuration: configuration, backend: ALSADevicePair(), client: client)
  }
}
