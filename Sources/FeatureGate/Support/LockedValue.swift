#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A value guarded by a `pthread_mutex_t`, shared by every module of the package.
///
/// Why not `Synchronization.Mutex`: on Linux its lock is a futex inside the prebuilt standard library, which
/// ThreadSanitizer cannot see, so every access under it is reported as a race and `--sanitize=thread` becomes
/// useless. ThreadSanitizer intercepts pthread mutexes, so with this lock a TSan report means a real race.
/// (The hot path never takes a lock; it reads an ``AtomicWord``, a C11 atomic, which TSan does see.)
@usableFromInline
package final class LockedValue<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    /// Creates a lock around `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: do not call `withLock` from `body`.
    /// Inlinable, so a hot path in another module (an event buffer's `track`) runs specialized, without a call.
    @inlinable @discardableResult
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
