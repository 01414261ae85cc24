internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

extension DuplexError {
  /// A failed alsa-lib call (`snd_pcm_*` returned the negative `code`),
  /// classified into a `Kind` and worded with `snd_strerror`.
  static func alsa(step: ALSAStep, device: String, value: String? = nil, code: Int32)
    -> DuplexError
  {
    let errno = abs(code)
    let kind: Kind
    switch (step, errno) {
    case (.open, ENOENT), (.open, ENODEV), (.open, ENXIO): kind = .unknownDevice
    case (.open, EBUSY), (.open, EAGAIN): kind = .deviceBusy
    case (_, ECONNREFUSED), (_, EHOSTDOWN): kind = .serverUnreachable
    case (.setRate, _): kind = .rateUnavailable
    case (.setChannels, _): kind = .channelCountUnavailable
    case (.setFormat, _): kind = .formatUnavailable
    case (_, ENODEV), (_, EBADFD), (_, ENOTCONN), (_, ECONNRESET), (_, EPIPE):
      kind = .deviceLost
    // A server's plugin answers EIO when it has no source or sink of that name.
    case (_, EIO) where step.isSetUp: kind = .setUpRefused
    case (.open, EIO): kind = .failed
    case (_, EIO): kind = .deviceLost
    // The loop's own verdict on a stream that stopped moving (no data for 5 s).
    case (_, ETIMEDOUT): kind = .deviceLost
    default: kind = .failed
    }
    return DuplexError(
      kind, operation: step.description, device: device, value: value, code: errno,
      reason: String(cString: snd_strerror(-errno)))
  }
}

/// Maps an alsa-lib return value (frames or a negative errno) to the loop's result.
@inline(__always)
func ioResult(_ value: Int) -> IOResult {
  if value >= 0 { return .ready }
  switch Int32(-value) {
  case EPIPE, ESTRPIPE: return .xrun
  case EINTR: return .woken
  default: return .failed(Int32(-value))
  }
}
