#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

/// Counts heap allocations made by threads that asked to be watched.
/// malloc and friends are replaced in the test executable and forwarded to
/// glibc; only the count is added.

/// Starts (1) or stops (0) counting the calling thread's allocations.
void allocation_counter_watch_current_thread(int watch);
/// Allocations counted since the last reset.
long allocation_counter_count(void);
/// Allocations counted on the calling thread while it was watched (never
/// reset; unaffected by other threads, so tests may run side by side).
long allocation_counter_thread_count(void);
/// Sets the count to zero.
void allocation_counter_reset(void);

#endif
