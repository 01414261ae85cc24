#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

/// Counts heap allocations made by threads that asked to be watched.
/// malloc and friends are replaced in the test executable and forwarded to
/// glibc; only the count is added.

/// Starts (1) or stops (0) counting the calling thread's allocations;
/// starting sets the thread's count to zero.
void allocation_counter_watch_current_thread(int watch);
/// Allocations counted since the last reset.
long allocation_counter_count(void);
/// Allocations counted on the calling thread since its watch last started
/// (unaffected by other threads, so tests may run side by side; a thread
/// the runner reuses starts each watch from zero).
long allocation_counter_thread_count(void);
/// Sets the count to zero.
void allocation_counter_reset(void);

#endif
