#include "AllocationCounter.h"

#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static __thread int watching;
static __thread long thread_counted;
static atomic_long counted;

static inline void note(void) {
  if (watching) {
    thread_counted += 1;
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
  }
}

void allocation_counter_watch_current_thread(int watch) {
  // Test runners reuse threads: what an earlier watch on this thread
  // counted belongs to that test, not to the one starting now.
  if (watch) thread_counted = 0;
  watching = watch;
}
long allocation_counter_count(void) { return atomic_load(&counted); }
long allocation_counter_thread_count(void) { return thread_counted; }
void allocation_counter_reset(void) { atomic_store(&counted, 0); }

void *malloc(size_t size) {
  note();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  note();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  note();
  return __libc_realloc(pointer, size);
}

void free(void *pointer) {
  note();
  __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  note();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return ENOMEM;
  *result = pointer;
  return 0;
}
