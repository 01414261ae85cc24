internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

/// The ALSA backend: a capture and/or a playback PCM, linked when alsa-lib
/// allows, polled together with an eventfd that wakes the audio thread for
/// `stop`. Follows the recipe of Docs/design/duplex-unit.md ("The duplex unit").
public final class ALSADevicePair: DuplexBackend {
  private var capture: PCMDevice?
  private var playback: PCMDevice?
  private var isLinked = false
  private var wakeDescriptor: Int32 = -1
  private var descriptors = UnsafeMutablePointer<pollfd>.allocate(capacity: 1)
  private var captureDescriptorCount = 0
  private var playbackDescriptorCount = 0
  private var silence = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 16)
  private var periodFrames = 0
  /// When the stream started and how many periods the loop has waited for:
  /// a device with no clock of its own (`null`) is paced to real time.
  private var startTime: UInt64 = 0
  private var periodsWaited: UInt64 = 0
  /// Capture progress: the frames available at the last look, when that
  /// number last changed, and whether the stream has delivered since it
  /// (re)started.
  private var lastAvailable = 0
  private var lastProgress: UInt64 = 0
  private var hasDelivered = false

  public init() {}

  deinit {
    close()
    descriptors.deallocate()
    silence.deallocate()
  }

  public func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  {
    close()
    if configuration.isInputEnabled {
      let device = try PCMDevice(name: configuration.captureDevice, direction: .capture)
      try device.configure(
        sampleRate: configuration.sampleRate, channelCount: configuration.inputChannelCount,
        format: configuration.alsa.format, periodFrames: configuration.periodFrames,
        periodCount: configuration.periodCount)
      capture = device
    }
    if configuration.isOutputEnabled {
      let device = try PCMDevice(
        name: configuration.playbackDevice, direction: .playback, isBlocking: true)
      // Playback follows the capture period so each period goes straight through.
      try device.configure(
        sampleRate: configuration.sampleRate, channelCount: configuration.outputChannelCount,
        format: configuration.alsa.format,
        periodFrames: capture?.periodFrames ?? configuration.periodFrames,
        periodCount: configuration.periodCount)
      playback = device
    }
    if let capture, let playback, capture.periodFrames != playback.periodFrames {
      throw DuplexError(
        .periodMismatch, operation: "match period sizes",
        device: "\(capture.name) / \(playback.name)",
        value: "\(capture.periodFrames) vs \(playback.periodFrames) frames", code: EINVAL)
    }
    if let capture, let playback { isLinked = capture.link(with: playback) }
    wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    captureDescriptorCount = capture?.descriptorCount ?? 0
    playbackDescriptorCount = playback?.descriptorCount ?? 0
    descriptors.deallocate()
    descriptors = .allocate(capacity: captureDescriptorCount + playbackDescriptorCount + 1)
    let period = capture?.periodFrames ?? playback?.periodFrames ?? configuration.periodFrames
    periodFrames = period
    if let playback {
      let bytes = playback.bufferFrames * playback.channelCount * playback.format.byteCount
      silence.deallocate()
      silence = .allocate(byteCount: bytes, alignment: 16)
      silence.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
    }
    return GrantedConfiguration(
      sampleRate: configuration.sampleRate, periodFrames: period,
      inputPeriodCount: capture?.periodCount ?? 0, outputPeriodCount: playback?.periodCount ?? 0,
      inputFormat: capture?.format, outputFormat: playback?.format,
      inputChannelCount: capture?.channelCount ?? 0,
      outputChannelCount: playback?.channelCount ?? 0,
      isLinked: isLinked)
  }

  public func start() -> IOResult {
    if let capture {
      let result = capture.start()
      if result < 0 { return ioResult(Int(result)) }
    }
    if let playback {
      // Pre-fill playback with silence: a linked start with an empty playback
      // buffer would starve it without reporting an xrun.
      let written = playback.write(silence, frames: prefillFrames(playback))
      if written < 0 { return ioResult(written) }
    }
    startTime = MonotonicClock.now()
    periodsWaited = 0
    lastAvailable = 0
    lastProgress = startTime
    hasDelivered = false
    if let playback, !isLinked, !playback.isRunning {
      return ioResult(Int(playback.start()))
    }
    return .ready
  }

  /// The silence queued before playback starts. One period is left free
  /// when there are three or more: plugins that model the buffer as a ring
  /// over a server's queue (pulse) cannot show a whole buffer consumed at
  /// once, since their pointer wraps to where it was.
  private func prefillFrames(_ playback: PCMDevice) -> Int {
    playback.periodCount >= 3
      ? playback.bufferFrames - playback.periodFrames : playback.bufferFrames
  }

  /// Unlinked streams restart playback alone: dropping capture as well
  /// would throw away what it holds (a recording would lose it). The
  /// silence queued is less what capture holds already, so the loop's
  /// latency stays what it was at start.
  public func restartPlayback() -> IOResult {
    guard let playback, let capture, !isLinked else { return restartBoth() }
    if playback.state != SND_PCM_STATE_XRUN { _ = playback.drop() }
    var result = playback.prepare()
    if result == -ESTRPIPE { result = playback.resume() }
    if result < 0 { return .failed(-result) }
    let waiting = max(0, capture.avail())
    let frames = max(playback.periodFrames, prefillFrames(playback) - waiting)
    let written = playback.write(silence, frames: frames)
    if written < 0 { return ioResult(written) }
    if !playback.isRunning {
      result = playback.start()
      if result < 0 { return ioResult(Int(result)) }
    }
    return .ready
  }

  public func waitForPeriod() -> IOResult {
    var result = IOResult.ready
    if let capture {
      result = ioResult(
        Int(waitFor(capture, first: 0, count: captureDescriptorCount, events: Int16(POLLIN))))
    } else if playback == nil {
      return .failed(ENODEV)
    }
    // Output only: the blocking write paces the loop.
    if case .ready = result { return keepToRealTime() }
    return result
  }

  /// Waits while the stream runs ahead of real time by more than its buffer
  /// and a fifth of a second — what a device with a clock never does, and
  /// what one without (`null`, a file plugin) does at every period.
  private func keepToRealTime() -> IOResult {
    guard let device = capture ?? playback, device.sampleRate > 0 else { return .ready }
    periodsWaited += 1
    let streamNanos =
      periodsWaited * UInt64(periodFrames) * 1_000_000_000 / UInt64(device.sampleRate)
    let leadNanos =
      UInt64(device.bufferFrames) * 1_000_000_000 / UInt64(device.sampleRate) + 200_000_000
    let now = MonotonicClock.now()
    guard startTime + streamNanos > now + leadNanos else { return .ready }
    let sleep = startTime + streamNanos - leadNanos - now
    var wake = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
    if poll(&wake, 1, Int32(min(1_000, sleep / 1_000_000 + 1))) > 0 {
      var value: UInt64 = 0
      _ = Glibc.read(wakeDescriptor, &value, 8)
      return .woken
    }
    return .ready
  }

  /// Polls a stream for any progress (up to one period's time), or the wake-up.
  private func waitReady(_ device: PCMDevice, count: Int, events: Int16) -> Int32 {
    let timeout = Int32(max(1, periodFrames * 1000 / max(1, device.sampleRate)))
    return pollOnce(device, count: count, events: events, timeout: timeout)
  }

  /// The one poll of both waits: a stream's descriptors and the wake-up
  /// eventfd, for at most `timeout` milliseconds. Returns 0 to look at the
  /// stream again (ready, timed out, interrupted, or a transient error
  /// event), -EINTR when woken, or the stream's error. Error events are
  /// transient while a server changes a stream's state (an idle source
  /// among them); a dead stream says so through avail, and the callers'
  /// stall bounds report the rest. Woken with nothing ready (a plugin's
  /// wake-up pipe), it sleeps a little rather than spin.
  private func pollOnce(_ device: PCMDevice, count: Int, events: Int16, timeout: Int32) -> Int32 {
    let filled = device.fillDescriptors(descriptors, capacity: count)
    descriptors[filled] = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
    let result = poll(descriptors, nfds_t(filled + 1), timeout)
    if result < 0 { return errno == EINTR ? 0 : -errno }
    if result == 0 { return 0 }
    if descriptors[filled].revents & Int16(POLLIN) != 0 {
      var value: UInt64 = 0
      _ = Glibc.read(wakeDescriptor, &value, 8)
      return -EINTR
    }
    let revents = device.events(descriptors, count: filled)
    if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
      let state = device.avail()
      if state < 0 { return Int32(state) }
      usleep(Self.errorEventPause)
    } else if revents & events == 0 {
      usleep(Self.emptyWakePause)
    }
    return 0
  }

  /// Microseconds to wait after a transient error event before looking again.
  private static let errorEventPause: useconds_t = 1_000
  /// Microseconds to wait after a wake-up with nothing ready.
  private static let emptyWakePause: useconds_t = 500

  /// Polls one stream's descriptors and the wake-up eventfd until a period
  /// is ready; never spins without bound. A sound server may hold back the
  /// first data of an idle source for a second or more, so only five
  /// seconds without any mean the device has stalled for good (-ETIMEDOUT); a
  /// server that has gone is reported at once by the plugin itself.
  ///
  /// A stream that delivered and then stops moving for a second (at least
  /// eight periods) is restarted like an overrun (-EPIPE): a server's
  /// plugin can stop advancing its pointer for good, and only a new stream
  /// gets it going. Shorter pauses are a server's rhythm, not a fault: a
  /// null sink's monitor delivers in blocks of the sink's latency, and its
  /// reported delay includes that latency, so a restart there would throw
  /// away audio the server was about to hand over.
  private func waitFor(_ device: PCMDevice, first: Int, count: Int, events: Int16) -> Int32 {
    let deadline = MonotonicClock.now() + 5_000_000_000
    let periodNanos = UInt64(periodFrames) * 1_000_000_000 / UInt64(max(1, device.sampleRate))
    let stallLimit = max(1_000_000_000, 8 * periodNanos)
    let partialWait = 2 * periodNanos
    while true {
      let available = device.avail()
      if available < 0 { return Int32(available) }
      let now = MonotonicClock.now()
      if available != lastAvailable {
        lastAvailable = available
        lastProgress = now
      }
      if available >= periodFrames {
        hasDelivered = true
        return 0
      }
      // Part of a period that has not grown for two periods' time: take it
      // (`read` moves partial transfers). Pulse's plugin advances its
      // pointer only as frames are read once the server holds a buffer's
      // worth, so waiting for a whole period there waits for ever.
      if hasDelivered && available > 0 && now - lastProgress > partialWait {
        return 0
      }
      if hasDelivered && now - lastProgress > stallLimit { return -EPIPE }
      if now >= deadline { return -ETIMEDOUT }
      let timeout = Int32(min(1_000, (deadline - now) / 1_000_000 + 1))
      let waited = pollOnce(device, count: count, events: events, timeout: timeout)
      if waited < 0 { return waited }
    }
  }

  public func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult {
    guard let capture else { return .failed(ENODEV) }
    let moved = transfer(
      capture, frames: frames, descriptorCount: captureDescriptorCount, events: Int16(POLLIN)
    ) {
      capture.read(destination + $0 * capture.channelCount * capture.format.byteCount, frames: $1)
    }
    return ioResult(moved)
  }

  /// Playback is written in blocking mode: the wait for room is alsa-lib's
  /// own, which every plugin supports (pulse's non-blocking path can stall
  /// for good once its server has queued the whole buffer). A write waits
  /// at most about one period, so `stop` still ends the loop promptly.
  public func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult {
    guard let playback else { return .failed(ENODEV) }
    let frameBytes = playback.channelCount * playback.format.byteCount
    var done = 0
    while done < frames {
      let wrote = playback.write(source + done * frameBytes, frames: frames - done)
      if wrote == Int(-EAGAIN) || wrote == Int(-EINTR) { continue }
      if wrote < 0 { return ioResult(wrote) }
      done += wrote
    }
    return .ready
  }

  /// Moves `frames` frames through `operation(offset, count)`, taking
  /// partial transfers when fewer frames are ready than a period (some
  /// plugins, pulse among them, round their fill level) and waiting on the
  /// stream's descriptors when nothing is ready. A second with no progress
  /// is a stuck stream, restarted like an overrun (-EPIPE) as `waitFor`
  /// does, once it has delivered; before that, the device has stalled
  /// (-ETIMEDOUT).
  @inline(__always)
  private func transfer(
    _ device: PCMDevice, frames: Int, descriptorCount: Int, events: Int16,
    _ operation: (Int, Int) -> Int
  ) -> Int {
    var done = 0
    var stalledSince: UInt64 = 0
    while done < frames {
      var moved = operation(done, frames - done)
      if moved == Int(-EAGAIN) {
        let ready = device.avail()
        if ready < 0 { return ready }
        if ready > 0 { moved = operation(done, min(ready, frames - done)) }
      }
      if moved == Int(-EAGAIN) || moved == 0 {
        let now = MonotonicClock.now()
        if stalledSince == 0 {
          stalledSince = now
        } else if now - stalledSince > 1_000_000_000 {
          return Int(hasDelivered ? -EPIPE : -ETIMEDOUT)
        }
        let waited = waitReady(device, count: descriptorCount, events: events)
        if waited < 0 { return Int(waited) }
        continue
      }
      if moved < 0 { return moved }
      stalledSince = 0
      done += moved
    }
    return frames
  }

  public func recover() -> IOResult {
    for device in [capture, playback] {
      guard let device else { continue }
      if device.state != SND_PCM_STATE_XRUN { _ = device.drop() }
      var result = device.prepare()
      if result == -ESTRPIPE { result = device.resume() }
      if result < 0 { return .failed(-result) }
    }
    return .ready
  }

  public func hostTime() -> UInt64 { (capture ?? playback)?.timeStamp() ?? MonotonicClock.now() }

  public func outputDelay() -> Int { playback?.delay() ?? 0 }

  public func wake() {
    guard wakeDescriptor >= 0 else { return }
    var one: UInt64 = 1
    _ = Glibc.write(wakeDescriptor, &one, 8)
  }

  public func halt() {
    _ = capture?.drop()
    _ = playback?.drop()
  }

  public func drain() {
    _ = playback?.drain()
  }

  public func close() {
    if isLinked { capture?.unlink() }
    capture?.close()
    playback?.close()
    capture = nil
    playback = nil
    isLinked = false
    if wakeDescriptor >= 0 { Glibc.close(wakeDescriptor) }
    wakeDescriptor = -1
  }

  public func error(code: Int32, during operation: LoopOperation) -> DuplexError {
    let name: String
    switch operation {
    case .capture,
      .wait where capture != nil:
      name = capture?.name ?? "?"
    case .playback: name = playback?.name ?? "?"
    default: name = [capture?.name, playback?.name].compactMap { $0 }.joined(separator: " → ")
    }
    return .alsa(step: .loop(operation), device: name, code: -code)
  }
}
