#ifndef CFLUSHCOUNTER_H
#define CFLUSHCOUNTER_H

/// The flushes (`fsync` and `fdatasync`) this process has made since it started, and of them those of directories.
/// The benchmark executable defines both functions itself (CFlushCounter.c), so every call to them in it, FeatureGate's
/// included, is counted before it goes to the kernel: what `strace -f -e fsync,fdatasync` would count, in process.
long featuregate_bench_flushes(void);
long featuregate_bench_directory_flushes(void);
/// The flushes the calling thread has made: those a call made on its caller's thread, not those it left to another.
long featuregate_bench_thread_flushes(void);

#endif
