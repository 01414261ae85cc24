import TestSupport
import Testing

extension Tag {
  /// A test that starts a private sound server (any of the three below).
  @Tag static var live: Self
  /// A test against a private PulseAudio server (ALSA's pulse plugin).
  @Tag static var pulseaudio: Self
  /// A test against a private PipeWire server (with WirePlumber).
  @Tag static var pipewire: Self
  /// A test against a private JACK server (jackd, dummy driver).
  @Tag static var jack: Self
}

extension Trait where Self == ConditionTrait {
  /// Leaves a live test out when `MICLOOP_OFFLINE=1` (`LiveTests`).
  static var needsSoundServer: Self {
    .enabled(if: LiveTests.areEnabled, Comment(rawValue: LiveTests.offlineReason))
  }
}
