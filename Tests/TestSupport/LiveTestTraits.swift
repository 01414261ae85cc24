import Foundation

/// Whether live tests run. `make test` runs them and they fail when their
/// server cannot start; a contributor without sound servers sets
/// `MICLOOP_OFFLINE=1` to leave every test tagged `.live` out (each test
/// target that has live tests declares the tags and the `needsSoundServer`
/// trait in its `LiveTags.swift`).
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
}
