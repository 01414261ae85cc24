internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

/// One ALSA PCM stream (capture or playback), opened non-blocking, with
/// the hardware and software parameters of the duplex recipe. Configured on
/// the control thread; `read`, `write`, `avail`, `timeStamp` and the
/// restart calls are made by the audio thread and never allocate.
final class PCMDevice {
  enum Direction: Sendable {
    case capture, playback
    var name: String { self == .capture ? "capture" : "playback" }
  }

  let name: String
  let direction: Direction
  private(set) var handle: OpaquePointer?
  private(set) var format: SampleFormat = .s16
  private(set) var channelCount = 0
  private(set) var sampleRate = 0
  private(set) var periodFrames = 0
  private(set) var periodCount = 0
  private(set) var bufferFrames = 0

  /// Opens `name`; non-blocking unless `isBlocking`.
  init(name: String, direction: Direction, isBlocking: Bool = false) throws(DuplexError) {
    self.name = name
    self.direction = direction
    micloop_silence_alsa_diagnostics()
    var pcm: OpaquePointer?
    let stream = direction == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
    let result = snd_pcm_open(&pcm, name, stream, isBlocking ? 0 : SND_PCM_NONBLOCK)
    guard result >= 0, let pcm else {
      throw DuplexError.alsa(step: .open, device: name, code: result)
    }
    handle = pcm
  }

  deinit { close() }

  func close() {
    if let handle { snd_pcm_close(handle) }
    handle = nil
  }

  /// Sets the hardware parameters (exact rate and channels; the format asked
  /// for or the most precise offered; period first, then period count) and
  /// the software parameters (explicit start, stop threshold = buffer size,
  /// wake-up at one period, monotonic time stamps).
  func configure(
    sampleRate rate: Int, channelCount channels: Int, format requested: SampleFormat?,
    periodFrames period: Int,
    periodCount periods: Int
  ) throws(DuplexError) {
    guard let handle else {
      throw DuplexError.alsa(step: .parameter("configure"), device: name, code: -EBADFD)
    }
    var hw: OpaquePointer?
    snd_pcm_hw_params_malloc(&hw)
    defer { snd_pcm_hw_params_free(hw) }
    func check(_ result: Int32, _ step: ALSAStep, _ value: String? = nil) throws(DuplexError) {
      if result < 0 {
        throw DuplexError.alsa(step: step, device: name, value: value, code: result)
      }
    }
    try check(snd_pcm_hw_params_any(handle, hw), .parameter("read the parameters of"))
    try check(
      snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED),
      .parameter("set interleaved access on"))
    let candidates = requested.map { [$0] } ?? SampleFormat.preference
    guard
      let chosen = candidates.first(where: {
        snd_pcm_hw_params_test_format(handle, hw, $0.alsaFormat) == 0
      })
    else {
      throw DuplexError.alsa(
        step: .setFormat, device: name,
        value: requested?.rawValue ?? "any of s16/s24/s32/float",
        code: -EINVAL)
    }
    try check(
      snd_pcm_hw_params_set_format(handle, hw, chosen.alsaFormat), .setFormat, chosen.rawValue)
    try check(
      snd_pcm_hw_params_set_channels(handle, hw, UInt32(channels)), .setChannels,
      "\(channels) channel\(channels == 1 ? "" : "s")")
    // No resampling inside alsa-lib for hw: devices; a plug device still may.
    var exactRate = UInt32(rate)
    var direction: Int32 = 0
    try check(
      snd_pcm_hw_params_set_rate_near(handle, hw, &exactRate, &direction), .setRate, "\(rate) Hz")
    if exactRate != UInt32(rate) {
      throw DuplexError.alsa(
        step: .setRate, device: name, value: "\(rate) Hz (nearest: \(exactRate) Hz)",
        code: -EINVAL)
    }
    var periodSize = snd_pcm_uframes_t(period)
    direction = 0
    try check(
      snd_pcm_hw_params_set_period_size_near(handle, hw, &periodSize, &direction),
      .parameter("set period size"),
      "\(period) frames")
    var count = UInt32(periods)
    direction = 0
    try check(
      snd_pcm_hw_params_set_periods_near(handle, hw, &count, &direction),
      .parameter("set period count"),
      "\(periods)")
    try check(snd_pcm_hw_params(handle, hw), .parameter("apply the hardware parameters of"))
    var grantedPeriod: snd_pcm_uframes_t = 0
    var grantedBuffer: snd_pcm_uframes_t = 0
    snd_pcm_hw_params_get_period_size(hw, &grantedPeriod, &direction)
    snd_pcm_hw_params_get_buffer_size(hw, &grantedBuffer)
    format = chosen
    channelCount = channels
    sampleRate = rate
    periodFrames = Int(grantedPeriod)
    bufferFrames = Int(grantedBuffer)
    periodCount = max(1, bufferFrames / max(1, periodFrames))

    var sw: OpaquePointer?
    snd_pcm_sw_params_malloc(&sw)
    defer { snd_pcm_sw_params_free(sw) }
    try check(snd_pcm_sw_params_current(handle, sw), .parameter("read the software parameters of"))
    var boundary: snd_pcm_uframes_t = 0
    snd_pcm_sw_params_get_boundary(sw, &boundary)
    // Capture starts explicitly; playback starts by itself once pre-filled
    // (so it never runs before it has data).
    let prefill = grantedBuffer - (periodCount >= 3 ? grantedPeriod : 0)
    let startThreshold = self.direction == .capture ? boundary : prefill
    try check(
      snd_pcm_sw_params_set_start_threshold(handle, sw, startThreshold),
      .parameter("set the start threshold of"))
    try check(
      snd_pcm_sw_params_set_stop_threshold(handle, sw, grantedBuffer),
      .parameter("set the stop threshold of"))
    try check(
      snd_pcm_sw_params_set_avail_min(handle, sw, grantedPeriod), .parameter("set avail_min of"))
    try check(
      snd_pcm_sw_params_set_tstamp_mode(handle, sw, SND_PCM_TSTAMP_ENABLE),
      .parameter("enable time stamps on"))
    _ = snd_pcm_sw_params_set_tstamp_type(handle, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)
    try check(snd_pcm_sw_params(handle, sw), .parameter("apply the software parameters of"))
    try check(snd_pcm_prepare(handle), .prepare)
  }

  /// Links this stream's start and stop to `other`'s; false when the
  /// devices cannot be linked (then they are started back to back).
  func link(with other: PCMDevice) -> Bool {
    guard let handle, let otherHandle = other.handle else { return false }
    return snd_pcm_link(handle, otherHandle) == 0
  }

  func unlink() {
    if let handle { snd_pcm_unlink(handle) }
  }

  var descriptorCount: Int {
    guard let handle else { return 0 }
    return Int(snd_pcm_poll_descriptors_count(handle))
  }

  func fillDescriptors(_ descriptors: UnsafeMutablePointer<pollfd>, capacity: Int) -> Int {
    guard let handle else { return 0 }
    return Int(snd_pcm_poll_descriptors(handle, descriptors, UInt32(capacity)))
  }

  /// Demangled poll events for this stream's descriptors (POLLIN/POLLOUT/POLLERR).
  func events(_ descriptors: UnsafeMutablePointer<pollfd>, count: Int) -> Int16 {
    guard let handle else { return Int16(POLLERR) }
    var events: UInt16 = 0
    let result = snd_pcm_poll_descriptors_revents(handle, descriptors, UInt32(count), &events)
    return result < 0 ? Int16(POLLERR) : Int16(bitPattern: events)
  }

  func prepare() -> Int32 { handle.map { snd_pcm_prepare($0) } ?? -EBADFD }
  func start() -> Int32 { handle.map { snd_pcm_start($0) } ?? -EBADFD }
  func drop() -> Int32 { handle.map { snd_pcm_drop($0) } ?? -EBADFD }
  /// Blocks until queued playback has been played (control thread only).
  func drain() -> Int32 {
    guard let handle else { return -EBADFD }
    return snd_pcm_drain(handle)
  }

  /// Frames ready to read or room to write, or a negative errno.
  func avail() -> Int { handle.map { Int(snd_pcm_avail($0)) } ?? Int(-EBADFD) }

  /// Frames queued between the application and the converter (the delay).
  func delay() -> Int {
    guard let handle else { return 0 }
    var frames: snd_pcm_sframes_t = 0
    return snd_pcm_delay(handle, &frames) == 0 ? Int(frames) : 0
  }

  var state: snd_pcm_state_t { handle.map { snd_pcm_state($0) } ?? SND_PCM_STATE_DISCONNECTED }
  var isRunning: Bool { state == SND_PCM_STATE_RUNNING }

  /// Reads up to `frames` frames; returns frames read or a negative errno.
  func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> Int {
    guard let handle else { return Int(-EBADFD) }
    return Int(snd_pcm_readi(handle, destination, snd_pcm_uframes_t(frames)))
  }

  /// Writes up to `frames` frames; returns frames written or a negative errno.
  func write(_ source: UnsafeRawPointer, frames: Int) -> Int {
    guard let handle else { return Int(-EBADFD) }
    return Int(snd_pcm_writei(handle, source, snd_pcm_uframes_t(frames)))
  }

  /// Resumes after a suspend (-ESTRPIPE), preparing again when resume is not
  /// supported. Returns 0 or a negative errno.
  func resume() -> Int32 {
    guard let handle else { return -EBADFD }
    var result = snd_pcm_resume(handle)
    var tries = 0
    while result == -EAGAIN && tries < 100 {
      usleep(10_000)
      result = snd_pcm_resume(handle)
      tries += 1
    }
    return result < 0 ? snd_pcm_prepare(handle) : result
  }

  /// Monotonic host time in nanoseconds of the stream's last period (ALSA's
  /// time stamp), or the current monotonic time when ALSA has none.
  func timeStamp() -> UInt64 {
    var stamp = timespec()
    var available: snd_pcm_uframes_t = 0
    if let handle, snd_pcm_htimestamp(handle, &available, &stamp) == 0,
      stamp.tv_sec != 0 || stamp.tv_nsec != 0
    {
      return UInt64(stamp.tv_sec) * 1_000_000_000 + UInt64(stamp.tv_nsec)
    }
    return MonotonicClock.now()
  }
}

extension SampleFormat {
  var alsaFormat: snd_pcm_format_t {
    switch self {
    case .s16: return SND_PCM_FORMAT_S16_LE
    case .s24: return SND_PCM_FORMAT_S24_LE
    case .s24Packed: return SND_PCM_FORMAT_S24_3LE
    case .s32: return SND_PCM_FORMAT_S32_LE
    case .float: return SND_PCM_FORMAT_FLOAT_LE
    }
  }
}

/// The monotonic clock in nanoseconds. Any thread.
public enum MonotonicClock {
  public static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// The same clock in seconds.
  public static var seconds: Double { Double(now()) / 1e9 }
}
