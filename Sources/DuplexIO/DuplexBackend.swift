#if canImport(Glibc)
  import Glibc
#endif

/// The pair of streams a duplex unit drives: ALSA devices in use, a
/// simulated pair in tests. `open` and `close` run on the control thread;
/// `wake` on any thread; everything else on the audio thread, where it must
/// not allocate.
public protocol DuplexBackend: AnyObject {
  /// Opens and configures the streams the configuration enables.
  func open(_ configuration: DuplexConfiguration) throws(ALSAError) -> GrantedConfiguration
  /// Pre-fills playback with silence and starts the streams (again after an
  /// xrun). Returns 0 or a negative errno.
  func start() -> Int32
  /// Waits for a period: capture readable, or (output only) playback
  /// writable. Returns 0 when ready, `-EINTR` when woken, or a negative errno.
  func waitForPeriod() -> Int32
  /// Reads exactly `frames` frames (waiting as needed). Returns `frames`,
  /// `-EINTR` when woken, or a negative errno (`-EPIPE`: overrun).
  func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> Int
  /// Writes exactly `frames` frames (waiting for room as needed). Returns
  /// `frames`, `-EINTR` when woken, or a negative errno (`-EPIPE`: underrun).
  func write(_ source: UnsafeRawPointer, frames: Int) -> Int
  /// Stops both streams and prepares them for `start` after an xrun.
  func recover() -> Int32
  /// Monotonic host time (ns) of the period just captured or written.
  func hostTime() -> UInt64
  /// Frames queued for playback ahead of the speaker.
  func outputDelay() -> Int
  /// Makes a pending or the next wait return `-EINTR` (any thread).
  func wake()
  /// Stops the streams at once (audio thread, at the end of the loop).
  func halt()
  /// Plays what is queued, then stops (control thread, after the loop).
  func drain()
  /// Releases the devices (control thread).
  func close()
}
