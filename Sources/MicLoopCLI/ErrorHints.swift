import DuplexIO
import MicLoopKit
import Recording
import TonePlans

/// The library reports what failed; the command line adds what to do about
/// it with its own options.
extension DuplexError {
  /// One line for standard error: the failure and its fix.
  var commandLineMessage: String {
    switch kind {
    case .unknownDevice: return description + "; list devices with 'micloop devices'"
    case .deviceBusy:
      return description
        + "; close the program using it (see 'fuser -v /dev/snd/*') or use a plughw:/dmix device"
    case .rateUnavailable:
      return description
        + "; pick a rate the device supports with --rate, or use a plughw: device to resample"
    case .channelCountUnavailable:
      return description + "; pick a channel count the device supports with --channels"
    case .formatUnavailable: return description + "; use a plughw: device"
    case .periodMismatch:
      return description + "; ask for a period both devices grant with --period"
    case .serverUnreachable:
      return description + "; start the sound server (or check XDG_RUNTIME_DIR) and try again"
    case .deviceLost: return description + "; check the device or sound server and start again"
    case .setUpRefused:
      return description
        + "; list devices with 'micloop devices' (and a server's sources and sinks with 'pactl list short sources')"
    case .threadUnavailable: return description + "; the system is out of threads or memory"
    case .libraryUnavailable:
      return description
        + "; install it (Debian: libjack-jackd2-0 for JACK, libpipewire-0.3-0 for PipeWire) or use an ALSA device"
    case .failed: return description
    }
  }
}

extension TonePlanError {
  /// The error with the fix that applies where the audio comes from: a
  /// device (a higher `--rate`) or a file (resample it).
  func commandLineMessage(isFile: Bool = false) -> String {
    switch kind {
    case .sampleRateTooLow:
      return description
        + (isFile
          ? "; resample the file (for example with sox) or use another plan"
          : "; use a higher --rate or another plan")
    case .sampleRateTooHigh:
      return description
        + (isFile ? "; resample the file first (for example with sox)" : "; use a lower --rate")
    case .aboveNyquist: return description + "; use a higher --rate or other characters"
    case .emptyMessage: return description + ": give the text to send"
    case .unknownSymbols, .tonesTooLow, .invalidPlan: return description
    }
  }
}

extension LiveJobError {
  /// One line for standard error: the failure and its fix.
  var commandLineMessage: String {
    switch self {
    case .device(let error): return error.commandLineMessage
    case .tones(let error): return error.commandLineMessage()
    case .recording(let error): return error.description
    case .formatChanged(let sampleRate, let channelCount):
      return
        "the device came back as \(sampleRate) Hz, \(channelCount) channels, not as it was; start again"
    case .ringOutRate(let planRate, let deviceRate):
      return
        "the devices run at \(deviceRate) Hz but the --ring-out response was measured at \(planRate) Hz; measure it at this rate (micloop latency --rate \(deviceRate) --save-ir FILE)"
    }
  }
}

extension RecorderError {
  /// One line for standard error, with `--dir` where a directory is meant.
  var commandLineMessage: String {
    switch self {
    case .notDirectory(let path):
      return "\(path): not a directory; give --dir a directory (it is created when missing)"
    default: return description
    }
  }
}

extension RecorderProblem {
  /// The problem in one line, its fix worded with `record`'s options.
  var commandLineMessage: String {
    switch fix {
    case .freeSpaceOrSetABudget:
      return line(
        fixWords:
          "free space there, or give --max-bytes or --min-free to delete the oldest recordings")
    case .raiseTheByteBudget: return line(fixWords: "raise --max-bytes")
    case .freeSpaceOrLowerTheFloor: return line(fixWords: "free space there or lower --min-free")
    case .checkTheDirectory, .none: return line()
    }
  }
}

extension ToneStart.ParseError {
  /// One line for `--start-on`'s value, naming the option that does it.
  var commandLineMessage: String {
    switch reason {
    case .subTone: return description + " with --ctcss HZ"
    case .noSequence: return description + " (--start-on NAME)"
    case .other: return description
    }
  }
}
