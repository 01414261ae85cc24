/// The pair of streams a duplex unit drives: ALSA devices in use, a
/// simulated pair in tests (`DuplexIOTesting`). `open`, `close`, `drain`
/// and `error(code:during:)` run on the control thread; `wake` on any
/// thread; everything else on the audio thread, where it must not allocate.
public protocol DuplexBackend: AnyObject {
  /// Opens and configures the streams the configuration enables.
  func open(_ configuration: DuplexConfiguration) throws(DuplexError) -> GrantedConfiguration
  /// Pre-fills playback with silence and starts the streams (again after an
  /// xrun): `.ready` or `.failed`.
  func start() -> IOResult
  /// Waits for a period: capture readable, or (output only) playback writable.
  func waitForPeriod() -> IOResult
  /// Reads exactly `frames` frames in the device format, waiting as needed.
  func read(_ destination: UnsafeMutableRawPointer, frames: Int) -> IOResult
  /// Writes exactly `frames` frames in the device format, waiting for room.
  func write(_ source: UnsafeRawPointer, frames: Int) -> IOResult
  /// Stops both streams and prepares them for `start` after an xrun.
  func recover() -> IOResult
  /// Restarts playback alone after it underran, leaving capture running so
  /// that nothing it captured is lost: `.ready` or `.failed`.
  func restartPlayback() -> IOResult
  /// Monotonic host time (ns) of the period just captured or written.
  func hostTime() -> UInt64
  /// Frames queued for playback ahead of the speaker.
  func outputDelay() -> Int
  /// Makes a pending or the next wait return `.woken` (any thread).
  func wake()
  /// Stops the streams at once (audio thread, at the end of the loop).
  func halt()
  /// Plays what is queued, then stops (control thread, after the loop).
  func drain()
  /// Releases the devices (control thread).
  func close()
  /// Describes a failure the loop met (`IOResult.failed`) in library words
  /// (control thread, after the loop).
  func error(code: Int32, during operation: LoopOperation) -> DuplexError
}

extension DuplexBackend {
  /// Recovers both streams and starts them again (after an xrun).
  public func restartBoth() -> IOResult {
    let recovered = recover()
    return recovered == .ready ? start() : recovered
  }

  /// Backends whose streams cannot restart apart restart both.
  public func restartPlayback() -> IOResult { restartBoth() }
}
