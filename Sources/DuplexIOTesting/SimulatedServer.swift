import DuplexIO
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A deterministic stand-in for a sound server's client (JACK, PipeWire):
/// a callback-driven backend whose cycles the caller runs, on whichever
/// thread plays the server's real-time thread, with any frame count (a
/// server may change its cycle) and any losses to report. Capture delivers
/// the running frame index modulo 1024, divided by 1024, as
/// `SimulatedDevicePair` does; what the unit plays is counted. Never
/// allocates in `cycle`. One thread at a time may call `cycle` and `end`;
/// the counters may be read from any thread.
public final class SimulatedServer: DuplexBackend, @unchecked Sendable {
  /// The cycle the server runs when the unit opens it.
  public let periodFrames: Int
  /// The largest cycle `cycle` accepts.
  public let maximumCycleFrames: Int
  /// Frames the server has captured (delivered to the unit) so far.
  public let capturedFrames = Atomic<Int>(0)
  /// Frames the unit wrote for playback so far.
  public let playedFrames = Atomic<Int>(0)
  /// Cycles in which the unit wrote nothing (the server played silence).
  public let silentCycles = Atomic<Int>(0)
  /// Value of the last sample the unit wrote (Float bit pattern).
  public let lastPlayedSample = Atomic<UInt32>(0)
  /// Times the streams were halted.
  public let halts = Atomic<Int>(0)

  private unowned(unsafe) var handler: (any ServerCycleHandler)?
  private let isStarted = Atomic<Bool>(false)
  private var configuration = DuplexConfiguration(.playback)
  private var capture = UnsafeMutablePointer<Float>.allocate(capacity: 0)
  private var playback = UnsafeMutablePointer<Float>.allocate(capacity: 0)
  private var hasWritten = false

  public init(periodFrames: Int = 64, maximumCycleFrames: Int = 1024) {
    self.periodFrames = periodFrames
    self.maximumCycleFrames = maximumCycleFrames
  }

  deinit {
    capture.deallocate()
    playback.deallocate()
  }

  public var isCallbackDriven: Bool { true }

  public func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  {
    self.configuration = configuration
    let inputs = configuration.isInputEnabled ? configuration.inputChannelCount : 0
    let outputs = configuration.isOutputEnabled ? configuration.outputChannelCount : 0
    capture.deallocate()
    playback.deallocate()
    capture = .allocate(capacity: max(1, inputs * maximumCycleFrames))
    capture.initialize(repeating: 0, count: max(1, inputs * maximumCycleFrames))
    playback = .allocate(capacity: max(1, outputs * maximumCycleFrames))
    playback.initialize(repeating: 0, count: max(1, outputs * maximumCycleFrames))
    return GrantedConfiguration(
      sampleRate: configuration.sampleRate, periodFrames: periodFrames,
      inputPeriodCount: inputs > 0 ? 1 : 0, outputPeriodCount: outputs > 0 ? 1 : 0,
      inputFormat: inputs > 0 ? .float : nil, outputFormat: outputs > 0 ? .float : nil,
      inputChannelCount: inputs, outputChannelCount: outputs, isLinked: true,
      maximumPeriodFrames: maximumCycleFrames, isServerCycle: true)
  }

  public func start(calling handler: any ServerCycleHandler) -> IOResult {
    self.handler = handler
    isStarted.store(true, ordering: .releasing)
    return .ready
  }

  /// Runs one server cycle of `frames` frames on the calling thread,
  /// reporting `losses`; returns whether the unit wrote the period.
  @discardableResult
  public func cycle(frames: Int, losses: CycleLosses = .none) -> Bool {
    precondition(frames <= maximumCycleFrames)
    let channels = configuration.isInputEnabled ? configuration.inputChannelCount : 0
    let first = capturedFrames.load(ordering: .relaxed)
    for frame in 0..<frames {
      let sample = SimulatedDevicePair.capturedSample(first + frame)
      for channel in 0..<channels { capture[frame * channels + channel] = sample }
    }
    hasWritten = false
    if isStarted.load(ordering: .acquiring), let handler {
      handler.runCycle(frames: frames, losses: losses)
    }
    capturedFrames.add(frames, ordering: .relaxed)
    if !hasWritten { silentCycles.add(1, ordering: .relaxed) }
    return hasWritten
  }

  /// The server goes away: the unit hears it as a lost device.
  public func end(code: Int32 = ECONNRESET) {
    if isStarted.load(ordering: .acquiring), let handler { handler.serverEnded(code: code) }
  }

  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult {
    let channels = configuration.inputChannelCount
    destination.assumingMemoryBound(to: Float.self).update(from: capture, count: frames * channels)
    return .ready
  }

  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult {
    let channels = configuration.outputChannelCount
    let samples = source.assumingMemoryBound(to: Float.self)
    playback.update(from: samples, count: frames * channels)
    lastPlayedSample.store(samples[frames * channels - 1].bitPattern, ordering: .relaxed)
    playedFrames.add(frames, ordering: .relaxed)
    hasWritten = true
    return .ready
  }

  public func halt() {
    isStarted.store(false, ordering: .releasing)
    halts.add(1, ordering: .relaxed)
  }

  public func hostTime() -> UInt64 { MonotonicClock.now() }
  public func start() -> IOResult { .failed(EINVAL) }
  public func waitForPeriod() -> IOResult { .failed(EINVAL) }
  public func recover() -> IOResult { .ready }
  public func outputDelay() -> Int { 0 }
  public func wake() {}
  public func drain() {}
  public func close() {}

  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    DuplexError(
      code == ECONNRESET ? .deviceLost : .failed, operation: "run", device: "simulated server",
      code: code)
  }
}
