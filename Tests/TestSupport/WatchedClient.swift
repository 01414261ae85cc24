import AllocationCounter
import DuplexIO
import Synchronization

/// Wraps a client so the allocation counter watches the audio thread once
/// the client is warm (from the second period on), and publishes that
/// thread's own count after every callback. Audio thread, except
/// `prepare` (control thread).
public final class WatchedClient<Inner: DuplexClient>: DuplexClient, @unchecked Sendable {
  public let inner: Inner
  /// Periods seen so far.
  public private(set) var periods = 0
  /// Allocations the audio thread made while watched, as of its last callback.
  public let allocations = Atomic<Int>(0)

  public init(_ inner: Inner) { self.inner = inner }

  public func prepare(for format: IOFormat) {
    self.format = format
    inner.prepare(for: format)
  }

  private func countPeriod() {
    if periods == 1 { allocation_counter_watch_current_thread(1) }
    periods += 1
  }

  public func inputAvailable(_ input: CapturedInput, timeStamp: AudioTimeStamp, flags: IOFlags) {
    countPeriod()
    inner.inputAvailable(input, timeStamp: timeStamp, flags: flags)
    allocations.store(allocation_counter_thread_count(), ordering: .releasing)
  }

  public func renderOutput(
    _ output: OutputPeriod, timeStamp: AudioTimeStamp, flags: IOFlags, isSilence: inout Bool
  ) {
    if format?.input == nil { countPeriod() }
    inner.renderOutput(output, timeStamp: timeStamp, flags: flags, isSilence: &isSilence)
    allocations.store(allocation_counter_thread_count(), ordering: .releasing)
  }

  private var format: IOFormat?
}
