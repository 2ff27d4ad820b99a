// C11 atomics on one machine word, for FeatureGate's hot path and its other lock-free counters.
//
// Why C: Swift's Synchronization module (Atomic, Mutex) needs iOS 18 / macOS 15 on Apple platforms, above the
// package's floor (iOS 16, macOS 13, tvOS 16, watchOS 9, visionOS 1). C11 <stdatomic.h> works on every platform
// Swift runs on, and ThreadSanitizer instruments these operations like its own.
//
// Every function is `static inline`: Swift imports them through this header and the optimizer inlines them into the
// caller, across modules too, so an acquire load is one plain load instruction on x86-64 and one `ldar` on arm64.
// The word is `uintptr_t` (Swift's `UInt`): 64 bits on every 64-bit platform, 32 on arm64_32 (Apple Watch).
#ifndef C_FEATURE_GATE_ATOMICS_H
#define C_FEATURE_GATE_ATOMICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/// One atomic word. Swift never reads the field: it allocates the struct (whose size and alignment are the
/// compiler's, see the assertions below) and passes its address to the functions here.
typedef struct fg_atomic_word {
    _Atomic(uintptr_t) value;
} fg_atomic_word;

_Static_assert(sizeof(fg_atomic_word) == sizeof(uintptr_t), "an atomic word is one machine word");
_Static_assert(_Alignof(fg_atomic_word) == _Alignof(uintptr_t), "an atomic word is aligned like a machine word");
_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "word-sized atomics must be lock-free");

/// Initializes a freshly allocated word. Not atomic: call it once, before the word is shared.
static inline void fg_atomic_word_init(fg_atomic_word *word, uintptr_t value) {
    atomic_init(&word->value, value);
}

static inline uintptr_t fg_atomic_word_load_relaxed(fg_atomic_word *word) {
    return atomic_load_explicit(&word->value, memory_order_relaxed);
}

static inline uintptr_t fg_atomic_word_load_acquire(fg_atomic_word *word) {
    return atomic_load_explicit(&word->value, memory_order_acquire);
}

static inline uintptr_t fg_atomic_word_load_seq_cst(fg_atomic_word *word) {
    return atomic_load_explicit(&word->value, memory_order_seq_cst);
}

static inline void fg_atomic_word_store_relaxed(fg_atomic_word *word, uintptr_t value) {
    atomic_store_explicit(&word->value, value, memory_order_relaxed);
}

static inline void fg_atomic_word_store_release(fg_atomic_word *word, uintptr_t value) {
    atomic_store_explicit(&word->value, value, memory_order_release);
}

static inline void fg_atomic_word_store_seq_cst(fg_atomic_word *word, uintptr_t value) {
    atomic_store_explicit(&word->value, value, memory_order_seq_cst);
}

// Read-modify-write operations take the ordering as one of the C11 `memory_order` constants (the Swift wrapper passes
// a literal, so the optimizer folds the choice away). Returns the value before the operation.

static inline uintptr_t fg_atomic_word_exchange(fg_atomic_word *word, uintptr_t value, memory_order order) {
    return atomic_exchange_explicit(&word->value, value, order);
}

/// Strong compare-and-exchange. On failure, `*expected` receives the current value. The failure ordering is the
/// strongest one C11 allows for `order` (no release part).
static inline bool fg_atomic_word_compare_exchange(
    fg_atomic_word *word, uintptr_t *expected, uintptr_t desired, memory_order order) {
    memory_order failure = order;
    if (order == memory_order_release) failure = memory_order_relaxed;
    if (order == memory_order_acq_rel) failure = memory_order_acquire;
    return atomic_compare_exchange_strong_explicit(&word->value, expected, desired, order, failure);
}

static inline uintptr_t fg_atomic_word_fetch_add(fg_atomic_word *word, uintptr_t operand, memory_order order) {
    return atomic_fetch_add_explicit(&word->value, operand, order);
}

static inline uintptr_t fg_atomic_word_fetch_sub(fg_atomic_word *word, uintptr_t operand, memory_order order) {
    return atomic_fetch_sub_explicit(&word->value, operand, order);
}

static inline uintptr_t fg_atomic_word_fetch_or(fg_atomic_word *word, uintptr_t operand, memory_order order) {
    return atomic_fetch_or_explicit(&word->value, operand, order);
}

static inline uintptr_t fg_atomic_word_fetch_and(fg_atomic_word *word, uintptr_t operand, memory_order order) {
    return atomic_fetch_and_explicit(&word->value, operand, order);
}

#endif
