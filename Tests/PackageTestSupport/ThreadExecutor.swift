import Foundation

/// A task executor with one thread of its own: a task that prefers it (`withTaskExecutorPreference`), and the default
/// actors it calls, run there, off the cooperative pool, so that the task may block (held up by a test's schedule,
/// say) without starving the pool.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    /// Starts the thread.
    public init() {
        Thread.detachNewThread { [self] in
            while let job = next() { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// Runs `job` on the thread, after those before it.
    public func enqueue(_ job: UnownedJob) {
        let queued = condition.withLock {
            jobs.append(job)
            condition.signal()
            return !stopped
        }
        // A job that comes after the end (a task started inside, say) gets a thread of its own.
        if !queued { Thread.detachNewThread { [self] in next()?.runSynchronously(on: asUnownedTaskExecutor()) } }
    }

    /// Ends the thread once the jobs enqueued are run.
    public func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func next() -> UnownedJob? {
        condition.withLock {
            while jobs.isEmpty && !stopped { condition.wait() }
            return jobs.isEmpty ? nil : jobs.removeFirst()
        }
    }
}

/// Runs `body` with a ``ThreadExecutor`` of its own preferred: a long CPU-bound test (an enumeration of thousands of
/// states) runs on its own thread, which the system time-slices with the rest, and leaves the shared pool (two
/// threads on a two-core machine) to the other tests. Kept on the pool, such tests starved the run's network tests
/// for minutes under the sanitizer, past their deadlines.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public func onAThreadOfItsOwn<Result>(_ body: () async throws -> Result) async throws -> Result {
    let executor = ThreadExecutor()
    defer { executor.stop() }
    return try await withTaskExecutorPreference(executor) { try await body() }
}
