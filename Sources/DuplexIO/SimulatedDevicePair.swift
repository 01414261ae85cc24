import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A deterministic stand-in for a pair of sound devices, for tests: a
/// hand-stepped clock (`advance`) or a paced one, a captured signal that
/// is the running frame index modulo 1024, divided by 1024, and faults to inject (overrun, underrun,
/// device loss). The audio-thread side never allocates. `advance`,
/// `inject` and the counters may be used from any thread.
public final class SimulatedDevicePair: DuplexBackend, @unchecked Sendable {
  /// A fault the next period meets.
  public enum Fault: Int, Sendable {
    case overrun = 1
    case underrun, deviceLost
  }

  /// Frames per period.
  public let periodFrames: Int
  /// Seconds per period when paced by a real clock; `nil` when hand-stepped.
  public let pacing: Double?
  /// Periods completed (read and/or written, or failed by a fault).
  public let completedPeriods = Atomic<Int>(0)
  /// Times the streams were started (1 + restarts after xruns).
  public let starts = Atomic<Int>(0)
  /// Frames the device has captured so far.
  public let capturedFrames = Atomic<Int>(0)
  /// Frames written for playback so far.
  public let playedFrames = Atomic<Int>(0)
  /// Value of the last sample written for playback (bit pattern).
  public let lastPlayedSample = Atomic<UInt32>(0)

  private let fault = Atomic<Int>(0)
  private let woken = Atomic<Bool>(false)
  private let available: UnsafeMutablePointer<sem_t>
  private var configuration = DuplexConfiguration()
  private var nextDeadline = timespec()

  public init(periodFrames: Int = 64, pacing: Double? = nil) {
    self.periodFrames = periodFrames
    self.pacing = pacing
    available = .allocate(capacity: 1)
    sem_init(available, 0, 0)
  }

  deinit {
    sem_destroy(available)
    available.deallocate()
  }

  /// Makes `periods` more periods due (hand-stepped clock).
  public func advance(periods: Int = 1) {
    for _ in 0..<periods { sem_post(available) }
  }

  /// Waits until `count` periods have completed; false after 10 s.
  @discardableResult
  public func waitUntilCompleted(_ count: Int) -> Bool {
    for _ in 0..<100_000 {
      if completedPeriods.load(ordering: .acquiring) >= count { return true }
      usleep(100)
    }
    return false
  }

  /// The next period meets `fault`.
  public func inject(_ fault: Fault) { self.fault.store(fault.rawValue, ordering: .releasing) }

  public func open(_ configuration: DuplexConfiguration) throws(ALSAError) -> GrantedConfiguration {
    self.configuration = configuration
    return GrantedConfiguration(
      sampleRate: configuration.sampleRate, periodFrames: periodFrames,
      inputPeriodCount: configuration.isInputEnabled ? configuration.periodCount : 0,
      outputPeriodCount: configuration.isOutputEnabled ? configuration.periodCount : 0,
      inputFormat: configuration.isInputEnabled ? .float : nil,
      outputFormat: configuration.isOutputEnabled ? .float : nil,
      inputChannelCount: configuration.isInputEnabled ? configuration.inputChannelCount : 0,
      outputChannelCount: configuration.isOutputEnabled ? configuration.outputChannelCount : 0,
      isLinked: true)
  }

  public func start() -> Int32 {
    starts.add(1, ordering: .relaxed)
    clock_gettime(CLOCK_REALTIME, &nextDeadline)
    return 0
  }

  public func waitForPeriod() -> Int32 {
    if fault.load(ordering: .acquiring) == Fault.deviceLost.rawValue {
      completedPeriods.add(1, ordering: .releasing)
      return -ENODEV
    }
    if let pacing {
      let nanoseconds = Int(pacing * 1e9) + nextDeadline.tv_nsec
      nextDeadline.tv_sec += nanoseconds / 1_000_000_000
      nextDeadline.tv_nsec = nanoseconds % 1_000_000_000
      while sem_timedwait(available, &nextDeadline) == 0 {
        if woken.exchange(false, ordering: .acquiringAndReleasing) { return -EINTR }
      }
      return 0
    }
    while sem_wait(available) != 0 {}
    if woken.exchange(false, ordering: .acquiringAndReleasing) { return -EINTR }
    return 0
  }

  /// The sample captured at `frame`: a ramp that repeats every 1024 frames.
  public static func capturedSample(_ frame: Int) -> Float { Float(frame % 1024) / 1024 }

  private func takeFault(_ kind: Fault) -> Bool {
    fault.compareExchange(expected: kind.rawValue, desired: 0, ordering: .acquiringAndReleasing)
      .exchanged
  }

  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> Int {
    if takeFault(.overrun) {
      finishPeriod(isLast: true)
      return Int(-EPIPE)
    }
    let samples = destination.assumingMemoryBound(to: Float.self)
    let channels = configuration.inputChannelCount
    let first = capturedFrames.add(frames, ordering: .relaxed).oldValue
    for frame in 0..<frames {
      for channel in 0..<channels {
        samples[frame * channels + channel] = Self.capturedSample(first + frame)
      }
    }
    finishPeriod(isLast: !configuration.isOutputEnabled)
    return frames
  }

  public func write(_ source: UnsafeRawPointer, frames: Int) -> Int {
    if takeFault(.underrun) {
      finishPeriod(isLast: true)
      return Int(-EPIPE)
    }
    let samples = source.assumingMemoryBound(to: Float.self)
    let channels = configuration.outputChannelCount
    lastPlayedSample.store(samples[frames * channels - 1].bitPattern, ordering: .relaxed)
    playedFrames.add(frames, ordering: .relaxed)
    finishPeriod(isLast: true)
    return frames
  }

  private func finishPeriod(isLast: Bool) {
    if isLast { completedPeriods.add(1, ordering: .releasing) }
  }

  public func recover() -> Int32 { 0 }
  public func hostTime() -> UInt64 { MonotonicClock.now() }
  public func outputDelay() -> Int { periodFrames * configuration.periodCount }

  public func wake() {
    woken.store(true, ordering: .releasing)
    sem_post(available)
  }

  public func halt() {}
  public func drain() {}
  public func close() {}
}
