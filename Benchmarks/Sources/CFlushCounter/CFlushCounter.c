// Counts flushes by defining `fsync` and `fdatasync` in the benchmark executable: the static link binds FeatureGate's
// calls to these (and the executable's definitions interpose the C library's for the shared libraries too), and each
// goes on to the kernel with the system call itself. Linux only: the benchmarks run here.
#define _GNU_SOURCE
#include "CFlushCounter.h"

#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic long flushes;
static _Atomic long directoryFlushes;
static _Thread_local long threadFlushes;

static void count(int fd) {
    struct stat status;
    atomic_fetch_add_explicit(&flushes, 1, memory_order_relaxed);
    threadFlushes += 1;
    if (fstat(fd, &status) == 0 && S_ISDIR(status.st_mode)) {
        atomic_fetch_add_explicit(&directoryFlushes, 1, memory_order_relaxed);
    }
}

int fsync(int fd) {
    count(fd);
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd) {
    count(fd);
    return (int)syscall(SYS_fdatasync, fd);
}

long featuregate_bench_flushes(void) { return atomic_load_explicit(&flushes, memory_order_relaxed); }

long featuregate_bench_thread_flushes(void) { return threadFlushes; }

long featuregate_bench_directory_flushes(void) {
    return atomic_load_explicit(&directoryFlushes, memory_order_relaxed);
}
