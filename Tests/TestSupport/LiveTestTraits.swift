import Foundation
import Testing

extension Tag {
  /// A test that starts a private sound server (any of the three below).
  @Tag public static var live: Self
  /// A test against a private PulseAudio server (ALSA's pulse plugin).
  @Tag public static var pulseaudio: Self
  /// A test against a private PipeWire server (with WirePlumber).
  @Tag public static var pipewire: Self
  /// A test against a private JACK server (jackd, dummy driver).
  @Tag public static var jack: Self
}

/// Whether live tests run. `make test` runs them and they fail when their
/// server cannot start; a contributor without sound servers sets
/// `MICLOOP_OFFLINE=1` to leave every test tagged `.live` out (or passes
/// `--skip tag:live` where `swift test` knows tag filters).
public enum LiveTests {
  /// Set by the environment of the test process, read once.
  public static let areEnabled = ProcessInfo.processInfo.environment["MICLOOP_OFFLINE"] != "1"

  /// The reason printed for a test left out.
  public static let offlineComment: Comment = "MICLOOP_OFFLINE=1: needs a private sound server"
}
