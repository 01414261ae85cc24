#if canImport(Glibc)
  import Glibc
#endif

/// The monotonic clock in seconds, for the recorder's own pacing (when a
/// file last synced, when a failed write may be retried): the clock
/// `DuplexIO.MonotonicClock` reads, without depending on the audio I/O
/// library for it. Any thread.
enum MonotonicClock {
  static var seconds: Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)) / 1e9
  }
}
