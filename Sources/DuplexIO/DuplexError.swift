#if canImport(Glibc)
  import Glibc
#endif

/// Why a duplex unit or one of its backends failed: what it was doing, on
/// which device, the value it asked for, and the system's reason. The
/// description speaks of devices and operations only; a program adds its own
/// advice (which option to change) from `kind`. Any thread.
public struct DuplexError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The class of failure, for a program that reacts to it.
  public enum Kind: Sendable, Equatable {
    /// No such device.
    case unknownDevice
    /// Another program holds the device.
    case deviceBusy
    /// The sample rate asked for is not offered.
    case rateUnavailable
    /// The channel count asked for is not offered.
    case channelCountUnavailable
    /// No sample format the unit converts is offered.
    case formatUnavailable
    /// Capture and playback granted different period sizes.
    case periodMismatch
    /// The sound server behind the device does not answer.
    case serverUnreachable
    /// The device or its server went away while running.
    case deviceLost
    /// The device opened but refused to be set up (a sound server with no
    /// source or sink of that name does this).
    case setUpRefused
    /// The audio thread could not be created.
    case threadUnavailable
    /// The library a sound server's devices need (libjack, libpipewire) is
    /// not installed or cannot be loaded.
    case libraryUnavailable
    /// Anything else.
    case failed
  }

  public var kind: Kind
  /// What the unit was doing ("open", "set the rate of", "capture" …).
  public var operation: String
  /// The device name.
  public var device: String
  /// The value asked for, if any ("48000 Hz").
  public var value: String?
  /// The positive errno behind the failure (0 when none).
  public var code: Int32
  /// The system's words for `code`.
  public var reason: String

  public init(
    _ kind: Kind, operation: String, device: String, value: String? = nil, code: Int32,
    reason: String? = nil
  ) {
    self.kind = kind
    self.operation = operation
    self.device = device
    self.value = value
    self.code = abs(code)
    self.reason = reason ?? String(cString: strerror(abs(code)))
  }

  /// Whether the device or its server has gone away (a restart may bring it back).
  public var isDeviceLost: Bool { kind == .deviceLost || kind == .serverUnreachable }

  public var description: String {
    let subject = value.map { "\($0) on \(device)" } ?? device
    switch kind {
    case .unknownDevice: return "unknown audio device '\(device)' (\(reason))"
    case .deviceBusy: return "audio device '\(device)' is busy (\(reason))"
    case .rateUnavailable, .channelCountUnavailable: return "\(subject) not available (\(reason))"
    case .formatUnavailable:
      return "no sample format the unit converts is offered by \(device) (\(reason))"
    case .periodMismatch:
      return "capture and playback granted different periods on \(device): \(value ?? reason)"
    case .serverUnreachable:
      return "the sound server behind '\(device)' is not reachable during \(operation) (\(reason))"
    case .deviceLost: return "audio device '\(device)' went away during \(operation) (\(reason))"
    case .setUpRefused:
      return
        "audio device '\(device)' could not be set up: \(operation) '\(device)' failed (\(reason)); a sound server may have no source or sink of that name"
    case .threadUnavailable: return "cannot start the audio thread (\(reason))"
    case .libraryUnavailable:
      return "'\(device)' devices need \(value ?? "a library") and it cannot be loaded (\(reason))"
    case .failed: return "\(operation) \(subject) failed (\(reason))"
    }
  }
}

/// The outcome of a backend call made on the audio thread: a plain value,
/// so reporting it never allocates.
public enum IOResult: Sendable, Equatable {
  /// The period is ready, or the transfer completed.
  case ready
  /// `wake` interrupted the wait (the owner asked the unit to stop).
  case woken
  /// The stream over- or underran; recover and go on.
  case xrun
  /// The device failed with this positive errno; the loop ends.
  case failed(Int32)
}

/// The step of the audio loop during which a failure happened.
public enum LoopOperation: Int, Sendable {
  case start, wait, capture, playback, restart

  public var description: String {
    switch self {
    case .start: return "start"
    case .wait: return "wait"
    case .capture: return "capture"
    case .playback: return "playback"
    case .restart: return "restart after an xrun"
    }
  }
}
