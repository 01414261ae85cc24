import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A RemoteIO-style duplex I/O unit: a capture bus (1) and a playback bus
/// (0) driven by one audio thread that, every period, calls the client's
/// input callback (the client renders the captured period into its own
/// buffer) and then its render callback (the client fills the period to
/// play). Generic over the backend and the client so nothing on the audio
/// thread goes through dynamic dispatch.
///
/// Lifecycle (control thread): `initialize` (open, configure, allocate) →
/// `start` → `stop` → `uninitialize`. Reconfiguring needs `uninitialize`
/// first. `statistics`, `isRunning` and `failure` may be read from any
/// thread.
public final class DuplexUnit<Backend: DuplexBackend, Client: DuplexClient>: @unchecked Sendable {
  public let configuration: DuplexConfiguration
  public let backend: Backend
  public let client: Client
  /// Counters kept by the audio thread.
  public let statistics = IOStatistics()
  /// What the devices granted; set by `initialize`.
  public private(set) var granted: GrantedConfiguration?
  /// Whether the audio thread got real-time priority; set by `start`.
  public private(set) var isRealtime = false

  private let stopRequested = Atomic<Bool>(false)
  private let running = Atomic<Bool>(false)
  private let halted = Atomic<Bool>(true)
  private let failureCode = Atomic<Int32>(0)
  private let failureOperation = Atomic<Int>(0)
  private var thread: RealtimeThread?
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

  /// Opens and configures the devices and allocates every buffer.
  public func initialize() throws(ALSAError) {
    guard granted == nil else { return }
    let granted = try backend.open(configuration)
    self.granted = granted
    let period = granted.periodFrames
    captureRaw.deallocate()
    playbackRaw.deallocate()
    outputBuffer.deallocate()
    // Room for a period plus drift correction's extra frames, 4 bytes a sample.
    captureRaw = .allocate(byteCount: 2 * period * granted.inputChannelCount * 4, alignment: 16)
    captureRaw.initializeMemory(
      as: UInt8.self, repeating: 0, count: 2 * period * granted.inputChannelCount * 4)
    playbackRaw = .allocate(byteCount: 2 * period * granted.outputChannelCount * 4, alignment: 16)
    playbackRaw.initializeMemory(
      as: UInt8.self, repeating: 0, count: 2 * period * granted.outputChannelCount * 4)
    outputBuffer = .allocate(capacity: 2 * period * granted.outputChannelCount)
    outputBuffer.initialize(repeating: 0)
  }

  /// Pre-fills playback, starts the devices and the audio thread.
  public func start() throws(ALSAError) {
    guard let granted, !running.load(ordering: .acquiring) else { return }
    stopRequested.store(false, ordering: .releasing)
    failureCode.store(0, ordering: .releasing)
    let result = backend.start()
    if result < 0 { throw ALSAError(operation: "start", device: deviceNames, code: result) }
    if configuration.alsa.locksMemory { _ = lockMemory() }
    running.store(true, ordering: .releasing)
    halted.store(false, ordering: .releasing)
    do {
      let priority =
        configuration.alsa.usesRealtimePriority ? configuration.alsa.realtimePriority : nil
      thread = try RealtimeThread(realtimePriority: priority) { [self] in runLoop(granted) }
      isRealtime = thread?.isRealtime ?? false
    } catch {
      running.store(false, ordering: .releasing)
      halted.store(true, ordering: .releasing)
      backend.halt()
      throw error
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
    let deadline = MonotonicClock.now() + UInt64(Self.haltTimeout * 1e9)
    while !halted.load(ordering: .acquiring) && MonotonicClock.now() < deadline {
      usleep(1_000)
    }
    if halted.load(ordering: .acquiring) {
      thread.join()
    } else {
      thread.detach()
      isWedged = true
    }
    self.thread = nil
  }

  /// Lets queued playback finish, then stops (for commands that play).
  public func stopAfterDrain() {
    stop()
    if !isWedged { backend.drain() }
  }

  /// Releases the devices and buffers' contents.
  public func uninitialize() {
    guard granted != nil, !isWedged else { return }
    backend.close()
    granted = nil
  }

  /// Seconds `stop` waits for the devices to halt before abandoning them.
  public static var haltTimeout: Double { 2 }

  /// Whether a device hung while halting and was abandoned by `stop`.
  public private(set) var isWedged = false

  /// Whether the audio loop is running.
  public var isRunning: Bool { running.load(ordering: .acquiring) }

  /// The error that ended the loop, if one did.
  public var failure: ALSAError? {
    let code = failureCode.load(ordering: .acquiring)
    guard code != 0 else { return nil }
    let operation = LoopOperation(rawValue: failureOperation.load(ordering: .acquiring)) ?? .wait
    return ALSAError(operation: operation.description, device: deviceNames, code: code)
  }

  private var deviceNames: String {
    switch (configuration.isInputEnabled, configuration.isOutputEnabled) {
    case (true, true) where configuration.captureDevice != configuration.playbackDevice:
      return "\(configuration.captureDevice) → \(configuration.playbackDevice)"
    case (true, _): return configuration.captureDevice
    default: return configuration.playbackDevice
    }
  }

  private enum LoopOperation: Int {
    case wait, capture, playback, restart
    var description: String {
      switch self {
      case .wait: return "wait"
      case .capture: return "capture"
      case .playback: return "playback"
      case .restart: return "restart after xrun"
      }
    }
  }

  // MARK: The audio thread

  private func fail(_ code: Int32, _ operation: LoopOperation) {
    failureOperation.store(operation.rawValue, ordering: .relaxed)
    failureCode.store(code, ordering: .releasing)
  }

  private func runLoop(_ granted: GrantedConfiguration) {
    defer {
      // Tell the control thread first: halting a dead device may hang.
      running.store(false, ordering: .releasing)
      backend.halt()
      halted.store(true, ordering: .releasing)
    }
    let period = granted.periodFrames
    let hasInput = granted.inputFormat != nil
    let hasOutput = granted.outputFormat != nil
    let outputSamples = period * granted.outputChannelCount
    var sampleTime: Int64 = 0
    var flags: IOFlags = []
    let settlingFrames = Int64(configuration.settlingTime * Double(granted.sampleRate))
    var drift = DriftTracker(period: period, isActive: hasInput && hasOutput)
    while !stopRequested.load(ordering: .acquiring) {
      let waited = backend.waitForPeriod()
      if waited == -EINTR { continue }
      if waited == -EPIPE {
        // The stream stalled: recover as from an overrun.
        if sampleTime < settlingFrames {
          statistics.settlingXruns.add(1, ordering: .relaxed)
        } else {
          statistics.overruns.add(1, ordering: .relaxed)
        }
        flags.insert(.inputOverrun)
        if !restart() { return }
        continue
      }
      if waited < 0 {
        fail(waited, .wait)
        return
      }
      if hasInput, let format = granted.inputFormat {
        let got = backend.read(captureRaw, frames: period)
        if got == Int(-EINTR) { continue }
        if got == Int(-EPIPE) || got == Int(-ESTRPIPE) {
          if sampleTime < settlingFrames {
            statistics.settlingXruns.add(1, ordering: .relaxed)
          } else {
            statistics.overruns.add(1, ordering: .relaxed)
          }
          flags.insert(.inputOverrun)
          if !restart() { return }
          continue
        }
        if got < 0 {
          fail(Int32(got), .capture)
          return
        }
        let stamp = AudioTimeStamp(sampleTime: sampleTime, hostTime: backend.hostTime())
        client.inputAvailable(
          CapturedInput(
            raw: captureRaw, format: format, frameCount: period,
            channelCount: granted.inputChannelCount),
          timeStamp: stamp, flags: flags)
      }
      if hasOutput, let format = granted.outputFormat {
        let stamp = AudioTimeStamp(
          sampleTime: sampleTime, hostTime: hasInput ? backend.hostTime() : MonotonicClock.now())
        let base = outputBuffer.baseAddress!
        base.update(repeating: 0, count: outputSamples)
        var isSilence = true
        client.renderOutput(
          UnsafeMutableBufferPointer(start: base, count: outputSamples), frameCount: period,
          timeStamp: stamp,
          flags: flags, isSilence: &isSilence)
        // Follow a playback clock that runs apart from the capture clock.
        let adjustment = drift.adjustment()
        var frames = period
        if adjustment != 0 {
          frames = period - adjustment
          if adjustment < 0 {
            // Repeat the last frame to stretch the period.
            let channels = granted.outputChannelCount
            for frame in period..<frames {
              for channel in 0..<channels {
                base[frame * channels + channel] = base[(period - 1) * channels + channel]
              }
            }
          }
          statistics.driftCorrectedFrames.add(adjustment, ordering: .relaxed)
          flags.insert(.driftCorrected)
        }
        if isSilence && adjustment >= 0 {
          playbackRaw.initializeMemory(
            as: UInt8.self, repeating: 0,
            count: frames * granted.outputChannelCount * format.byteCount)
        } else {
          format.encode(base, into: playbackRaw, count: frames * granted.outputChannelCount)
        }
        let written = backend.write(playbackRaw, frames: frames)
        if written == Int(-EINTR) { continue }
        if written == Int(-EPIPE) || written == Int(-ESTRPIPE) {
          if sampleTime < settlingFrames {
            statistics.settlingXruns.add(1, ordering: .relaxed)
          } else {
            statistics.underruns.add(1, ordering: .relaxed)
          }
          if !restart() { return }
          flags = [.outputUnderrun]
          sampleTime += Int64(period)
          continue
        }
        if written < 0 {
          fail(Int32(written), .playback)
          return
        }
        let delay = backend.outputDelay()
        drift.observe(delay: delay)
        if delay > statistics.maximumOutputDelay.load(ordering: .relaxed) {
          statistics.maximumOutputDelay.store(delay, ordering: .relaxed)
        }
      }
      flags = []
      sampleTime += Int64(period)
      statistics.periods.add(1, ordering: .relaxed)
    }
  }

  /// Recovers from an xrun: stop, prepare, pre-fill and start both streams.
  private func restart() -> Bool {
    var result = backend.recover()
    if result >= 0 { result = backend.start() }
    if result < 0 {
      fail(result, .restart)
      return false
    }
    return true
  }
}

extension DuplexUnit where Backend == ALSADevicePair {
  /// A unit on ALSA devices.
  public convenience init(configuration: DuplexConfiguration, client: Client) {
    self.init(configuration: configuration, backend: ALSADevicePair(), client: client)
  }
}

/// Watches the playback delay of a capture→playback loop and asks for a
/// few frames to be dropped or repeated when two device clocks drift apart,
/// so latency neither grows nor shrinks into xruns. The first steady mean
/// delay is the reference, so a constant offset (a sound server's own
/// queue) is never "corrected". Audio thread.
struct DriftTracker {
  let period: Int
  let isActive: Bool
  private var reference: Int?
  private var sum = 0
  private var count = 0
  private var pending = 0
  private var settled = 0

  init(period: Int, isActive: Bool) {
    self.period = period
    self.isActive = isActive
  }

  /// Adds one delay reading; every 64 periods the mean decides a correction.
  mutating func observe(delay: Int) {
    guard isActive else { return }
    // The first readings after a start are not steady yet.
    if settled < 16 {
      settled += 1
      return
    }
    sum += delay
    count += 1
    guard count == 64 else { return }
    let mean = sum / count
    sum = 0
    count = 0
    guard let reference else {
      self.reference = mean
      return
    }
    let error = mean - reference
    if abs(error) > period {
      // Positive: too much queued, drop frames; negative: repeat frames.
      let step = min(abs(error) - period / 2, period / 2)
      pending = error > 0 ? step : -step
    }
  }

  /// Frames to drop (positive) or repeat (negative) in this period.
  mutating func adjustment() -> Int {
    let value = pending
    pending = 0
    return value
  }
}
