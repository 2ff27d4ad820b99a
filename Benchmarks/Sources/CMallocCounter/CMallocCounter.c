// Counts heap allocations by defining the C library's allocation functions in the probe executable: the dynamic
// linker binds every library's calls to the executable's definitions first, and each goes on to glibc's own
// allocator (`__libc_malloc` and its siblings). A counter per thread as well as one for the process, so that a probe
// can count what its own thread did up to a point, whatever other threads (a task of utility priority, the
// runtime's pool) happen to have done by then: valgrind's whole-process count varies with their timing. Linux
// (glibc) only: the probes run here.
#define _GNU_SOURCE
#include "CMallocCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Atomic long processAllocations;
static _Thread_local long threadAllocations;

static inline void count(void) {
    threadAllocations += 1;
    atomic_fetch_add_explicit(&processAllocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count();
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

long featuregate_probe_thread_allocations(void) { return threadAllocations; }

long featuregate_probe_process_allocations(void) {
    return atomic_load_explicit(&processAllocations, memory_order_relaxed);
}
