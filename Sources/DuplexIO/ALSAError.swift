internal import CALSA

#if canImport(Glibc)
  import Glibc
#endif

/// A failed ALSA call, with the operation, the device and the value asked
/// for, and a one-line description that says what to do about it.
/// The corresponding C functions are alsa-lib's `snd_pcm_*`.
public struct ALSAError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What micloop was doing ("open", "set rate" …).
  public var operation: String
  /// The ALSA device name.
  public var device: String
  /// The value requested, if any ("48000 Hz").
  public var value: String?
  /// The negative errno ALSA returned.
  public var code: Int32

  public init(operation: String, device: String, value: String? = nil, code: Int32) {
    self.operation = operation
    self.device = device
    self.value = value
    self.code = code
  }

  /// ALSA's text for the error code.
  public var reason: String { String(cString: snd_strerror(code)) }

  /// True when the device has gone away (unplugged, sound server stopped).
  public var isDeviceLost: Bool {
    code == -ENODEV || code == -EBADFD || code == -EIO || code == -ENOTCONN || code == -ECONNRESET
      || code == -EPIPE && operation == "lost"
  }

  public var description: String {
    let subject = value.map { "\($0) on \(device)" } ?? device
    switch (operation, code) {
    case ("open", -ENOENT), ("open", -ENODEV), ("open", -ENXIO):
      return "unknown audio device '\(device)' (\(reason)); list devices with 'micloop devices'"
    case ("open", -EBUSY), ("open", -EAGAIN):
      return
        "audio device '\(device)' is busy; close the program using it (see 'fuser -v /dev/snd/*') or use a plughw:/dmix device"
    case ("set rate", _):
      return
        "\(subject) not available (\(reason)); pick a rate the device supports with --rate, or use a plughw: device to resample"
    case ("set channels", _):
      return
        "\(subject) not available (\(reason)); pick a channel count the device supports with --channels"
    case ("set format", _):
      return
        "no sample format micloop speaks is available on \(device) (\(reason)); use a plughw: device"
    default:
      if isDeviceLost {
        return
          "audio device '\(device)' went away during \(operation) (\(reason)); check the device or sound server and start again"
      }
      return "\(operation) \(subject) failed: \(reason)"
    }
  }
}
