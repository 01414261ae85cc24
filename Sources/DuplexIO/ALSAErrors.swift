internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

extension DuplexError {
  /// A failed alsa-lib call (`snd_pcm_*` returned the negative `code`),
  /// classified into a `Kind` and worded with `snd_strerror`.
  static func alsa(operation: String, device: String, value: String? = nil, code: Int32)
    -> DuplexError
  {
    let errno = abs(code)
    // The steps that set a device up, as PCMDevice names them.
    let isSetUp =
      operation.hasSuffix(" of") || operation.hasPrefix("set ") || operation == "prepare"
    let kind: Kind
    switch (operation, errno) {
    case ("open", ENOENT), ("open", ENODEV), ("open", ENXIO): kind = .unknownDevice
    case ("open", EBUSY), ("open", EAGAIN): kind = .deviceBusy
    case (_, ECONNREFUSED), (_, EHOSTDOWN): kind = .serverUnreachable
    case ("set rate", _): kind = .rateUnavailable
    case ("set channels", _): kind = .channelCountUnavailable
    case ("set format", _): kind = .formatUnavailable
    case (_, ENODEV), (_, EBADFD), (_, ENOTCONN), (_, ECONNRESET), (_, EPIPE):
      kind = .deviceLost
    // A server's plugin answers EIO when it has no source or sink of that name.
    case (_, EIO) where isSetUp: kind = .setUpRefused
    case (_, EIO) where operation != "open": kind = .deviceLost
    // The loop's own verdict on a stream that stopped moving (no data for 5 s).
    case (_, ETIMEDOUT): kind = .deviceLost
    default: kind = .failed
    }
    return DuplexError(
      kind, operation: operation, device: device, value: value, code: errno,
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
