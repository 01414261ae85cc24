import DuplexIO
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A deterministic stand-in for a pair of sound devices, for tests and for
/// programs that run a unit without hardware: a hand-stepped, real-time or
/// free-running clock; captured audio that is the running frame index
/// modulo 1024, divided by 1024 (or a given signal, repeated), in any
/// `SampleFormat`; a playback clock
/// that may run fast or slow by some parts per million; and faults to
/// inject (overrun, underrun, device loss); restarting capture after an
/// overrun loses the period it held, as on a real device. The audio-thread side never
/// allocates. `advance`, `inject` and the counters may be used from any
/// thread.
public final class SimulatedDevicePair: DuplexBackend, @unchecked Sendable {
  /// A fault the next period meets.
  public enum Fault: Int, Sendable {
    case overrun = 1
    case underrun, deviceLost
  }

  /// What paces the periods.
  public enum Clock: Sendable, Equatable {
    /// A period is due each time `advance` is called.
    case handStepped
    /// A period is due every so many seconds of real time.
    case realTime(periodSeconds: Double)
    /// Every period is due at once (simulated hours in seconds).
    case freeRunning
  }

  /// Frames per period.
  public let periodFrames: Int
  /// What paces the periods.
  public let clock: Clock
  /// The device sample format granted on both buses.
  public let format: SampleFormat
  /// How much faster (positive) the playback clock runs than the capture
  /// clock, in parts per million.
  public let playbackClockOffset: Double
  /// Periods completed (read and/or written, or failed by a fault).
  public let completedPeriods = Atomic<Int>(0)
  /// Times the streams were started (1 + restarts after xruns).
  public let starts = Atomic<Int>(0)
  /// Times playback alone was restarted after an underrun.
  public let playbackRestarts = Atomic<Int>(0)
  /// Frames the device has captured so far.
  public let capturedFrames = Atomic<Int>(0)
  /// Frames written for playback so far.
  public let playedFrames = Atomic<Int>(0)
  /// Value of the last sample written for playback (Float bit pattern).
  public let lastPlayedSample = Atomic<UInt32>(0)

  /// What the capture delivers, repeated end to end in every channel;
  /// empty for the ramp of `capturedSample`.
  public let captureLoop: [Float]
  /// A room whose microphone the capture hears instead, with the pair's
  /// own speaker in it (a closed acoustic loop); `nil` for none.
  public let room: SimulatedRoom?

  private let fault = Atomic<Int>(0)
  private let woken = Atomic<Bool>(false)
  private let available: UnsafeMutablePointer<sem_t>
  private var configuration = DuplexConfiguration(.playback)
  private var nextDeadline = timespec()
  private var lastFrame: UnsafeMutablePointer<Float>
  /// A period of the room's microphone, or of playback decoded for it.
  private var roomBuffer = UnsafeMutablePointer<Float>.allocate(capacity: 1)

  /// - Parameters:
  ///   - captureLoop: a signal the capture repeats end to end instead of
  ///     the ramp (a minute of test audio for a day-long run).
  ///   - room: a room the capture listens to and playback plays into.
  public init(
    periodFrames: Int = 64, clock: Clock = .handStepped, format: SampleFormat = .float,
    playbackClockOffset: Double = 0, captureLoop: [Float] = [], room: SimulatedRoom? = nil
  ) {
    self.periodFrames = periodFrames
    self.captureLoop = captureLoop
    self.room = room
    self.clock = clock
    self.format = format
    self.playbackClockOffset = playbackClockOffset
    available = .allocate(capacity: 1)
    sem_init(available, 0, 0)
    lastFrame = .allocate(capacity: 1)
  }

  deinit {
    sem_destroy(available)
    available.deallocate()
    lastFrame.deallocate()
    roomBuffer.deallocate()
  }

  /// Makes `periods` more periods due (hand-stepped clock).
  public func advance(periods: Int = 1) {
    for _ in 0..<periods { sem_post(available) }
  }

  /// Waits until `count` periods have completed; false after `timeout` seconds.
  @discardableResult
  public func waitUntilCompleted(_ count: Int, timeout: Double = 60) -> Bool {
    let deadline = MonotonicClock.seconds + timeout
    while MonotonicClock.seconds < deadline {
      if completedPeriods.load(ordering: .acquiring) >= count { return true }
      usleep(100)
    }
    return completedPeriods.load(ordering: .acquiring) >= count
  }

  /// The next period meets `fault`.
  public func inject(_ fault: Fault) { self.fault.store(fault.rawValue, ordering: .releasing) }

  public func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  {
    self.configuration = configuration
    lastFrame.deallocate()
    lastFrame = .allocate(capacity: max(1, configuration.outputChannelCount * periodFrames * 2))
    let granted = GrantedConfiguration(
      sampleRate: configuration.sampleRate, periodFrames: periodFrames,
      inputPeriodCount: configuration.isInputEnabled ? configuration.periodCount : 0,
      outputPeriodCount: configuration.isOutputEnabled ? configuration.periodCount : 0,
      inputFormat: configuration.isInputEnabled ? format : nil,
      outputFormat: configuration.isOutputEnabled ? format : nil,
      inputChannelCount: configuration.isInputEnabled ? configuration.inputChannelCount : 0,
      outputChannelCount: configuration.isOutputEnabled ? configuration.outputChannelCount : 0,
      isLinked: true)
    if let room {
      roomBuffer.deallocate()
      roomBuffer = .allocate(capacity: 2 * periodFrames * max(1, configuration.outputChannelCount))
      roomBuffer.initialize(
        repeating: 0, count: 2 * periodFrames * max(1, configuration.outputChannelCount))
      room.prepare(
        periodFrames: periodFrames, playbackDelay: max(periodFrames, granted.loopBufferFrames))
    }
    return granted
  }

  public func start() -> IOResult {
    starts.add(1, ordering: .relaxed)
    clock_gettime(CLOCK_REALTIME, &nextDeadline)
    return .ready
  }

  public func waitForPeriod() -> IOResult {
    if fault.load(ordering: .acquiring) == Fault.deviceLost.rawValue {
      completedPeriods.add(1, ordering: .releasing)
      return .failed(ENODEV)
    }
    switch clock {
    case .realTime(let seconds):
      let nanoseconds = Int(seconds * 1e9) + nextDeadline.tv_nsec
      nextDeadline.tv_sec += nanoseconds / 1_000_000_000
      nextDeadline.tv_nsec = nanoseconds % 1_000_000_000
      while sem_timedwait(available, &nextDeadline) == 0 {
        if woken.exchange(false, ordering: .acquiringAndReleasing) { return .woken }
      }
      return .ready
    case .handStepped:
      while sem_wait(available) != 0 {}
      if woken.exchange(false, ordering: .acquiringAndReleasing) { return .woken }
      return .ready
    case .freeRunning:
      if woken.exchange(false, ordering: .acquiringAndReleasing) { return .woken }
      return .ready
    }
  }

  /// The sample captured at `frame`: a ramp that repeats every 1024 frames
  /// (exact in every sample format).
  public static func capturedSample(_ frame: Int) -> Float { Float(frame % 1024) / 1024 }

  private func takeFault(_ kind: Fault) -> Bool {
    fault.compareExchange(expected: kind.rawValue, desired: 0, ordering: .acquiringAndReleasing)
      .exchanged
  }

  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult {
    if takeFault(.overrun) {
      finishPeriod(isLast: true)
      return .xrun
    }
    let channels = configuration.inputChannelCount
    let first = capturedFrames.add(frames, ordering: .relaxed).oldValue
    if let room { room.listen(into: roomBuffer) }
    // Encode one frame at a time through a frame-sized scratch: no allocation.
    for frame in 0..<frames {
      let sample =
        room != nil
        ? roomBuffer[frame]
        : captureLoop.isEmpty
          ? Self.capturedSample(first + frame) : captureLoop[(first + frame) % captureLoop.count]
      for channel in 0..<channels { lastFrame[channel] = sample }
      format.encode(
        lastFrame, into: destination + frame * channels * format.byteCount, count: channels)
    }
    finishPeriod(isLast: !configuration.isOutputEnabled)
    return .ready
  }

  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult {
    if takeFault(.underrun) {
      finishPeriod(isLast: true)
      return .xrun
    }
    let channels = configuration.outputChannelCount
    if let room {
      format.decode(source, into: roomBuffer, count: frames * channels)
      room.play(roomBuffer, frames: frames, channels: channels)
    }
    format.decode(
      source + (frames - 1) * channels * format.byteCount, into: lastFrame, count: channels)
    lastPlayedSample.store(lastFrame[channels - 1].bitPattern, ordering: .relaxed)
    playedFrames.add(frames, ordering: .relaxed)
    finishPeriod(isLast: true)
    return .ready
  }

  private func finishPeriod(isLast: Bool) {
    if isLast { completedPeriods.add(1, ordering: .releasing) }
  }

  /// Restarting capture loses the period it held, as a real device's
  /// buffer is dropped: the next read starts a period later in the signal.
  public func recover() -> IOResult {
    if configuration.isInputEnabled { capturedFrames.add(periodFrames, ordering: .relaxed) }
    return .ready
  }

  /// Playback restarts alone; capture runs on and loses nothing.
  public func restartPlayback() -> IOResult {
    playbackRestarts.add(1, ordering: .relaxed)
    return .ready
  }

  public func hostTime() -> UInt64 { MonotonicClock.now() }

  /// The pre-fill plus what was written minus what the playback clock
  /// consumed: constant when the clocks agree, drifting when they do not.
  public func outputDelay() -> Int {
    let elapsed = Double(completedPeriods.load(ordering: .relaxed) * periodFrames)
    let consumed = elapsed * (1 + playbackClockOffset / 1e6)
    let queued =
      Double(periodFrames * configuration.periodCount + playedFrames.load(ordering: .relaxed))
      - consumed
    return Int(queued.rounded())
  }

  public func wake() {
    woken.store(true, ordering: .releasing)
    sem_post(available)
  }

  public func halt() {}
  public func drain() {}
  public func close() {}

  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    DuplexError(
      code == ENODEV ? .deviceLost : .failed, operation: operation.description,
      device: "simulated", code: code)
  }
}
