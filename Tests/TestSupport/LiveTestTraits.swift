import Foundation

#if canImport(Testing)
  import Testing
#endif

/// Whether live tests run. `make test` runs them and they fail when their
/// server cannot start; a contributor without sound servers sets
/// `MICLOOP_OFFLINE=1` to leave every test tagged `.live` out (the tags and
/// the `needsSoundServer`, `needsRoot` and `slow` traits are below, for
/// every test target).
public enum LiveTests {
  /// Set by the environment of the test process, read once.
  public static let areEnabled = ProcessInfo.processInfo.environment["MICLOOP_OFFLINE"] != "1"

  /// Why a test was left out.
  public static let offlineReason = "MICLOOP_OFFLINE=1: needs a private sound server"

  /// Whether the tests that mount a small file system run: always under
  /// `make test` (as root; they fail when the mount fails), and offline only
  /// for root, since a contributor's `swift test` cannot mount.
  public static let mountsDisks = areEnabled || getuid() == 0

  /// Why a disk test was left out.
  public static let mountReason =
    "MICLOOP_OFFLINE=1 without root: mounting a small tmpfs needs root"

  /// Whether the tests that take seconds of a core each (`.slow`) run:
  /// always, but for `MICLOOP_QUICK=1` (`make quick`).
  public static let runsSlowTests = ProcessInfo.processInfo.environment["MICLOOP_QUICK"] != "1"

  /// Why a slow test was left out.
  public static let slowReason = "MICLOOP_QUICK=1: takes over 4 s of a core"
}

// The release build compiles this target too, where the Testing module
// cannot be imported: the tags and traits exist only for the tests.
#if canImport(Testing)
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

  extension Trait where Self == ConditionTrait {
    /// Leaves a live test out when `MICLOOP_OFFLINE=1` (`LiveTests`).
    public static var needsSoundServer: Self {
      .enabled(if: LiveTests.areEnabled, Comment(rawValue: LiveTests.offlineReason))
    }

    /// Leaves a test that takes over 4 s of a core by itself (hours
    /// simulated, corpora decoded, rooms swept) out when `MICLOOP_QUICK=1`;
    /// `make check` and `make test` run it.
    public static var slow: Self {
      .enabled(if: LiveTests.runsSlowTests, Comment(rawValue: LiveTests.slowReason))
    }

    /// Leaves a test that mounts a small tmpfs out when `MICLOOP_OFFLINE=1`
    /// and not root (`LiveTests.mountsDisks`).
    public static var needsRoot: Self {
      .enabled(if: LiveTests.mountsDisks, Comment(rawValue: LiveTests.mountReason))
    }
  }
#endif
