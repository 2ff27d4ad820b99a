#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H

/// Allocations made so far by the calling thread (malloc, calloc, realloc, the aligned forms).
long featuregate_probe_thread_allocations(void);

/// Allocations made so far by every thread of the process.
long featuregate_probe_process_allocations(void);

#endif
