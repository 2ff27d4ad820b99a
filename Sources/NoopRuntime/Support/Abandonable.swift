import FeatureGate

/// Runs work that may hang (a backend, an inner transport, a subsystem call) so that the caller can stop
/// waiting for it: when the calling task is cancelled, or a deadline passes, the caller resumes at once and the
/// work is cancelled and left to finish on its own, its result discarded.
///
/// This is how a revocation stays bounded (R4) even when code it does not own ignores cancellation.
@usableFromInline
enum Abandonable {
    /// Runs `operation` in a task of its own and waits for its result, or returns `nil` as soon as the calling
    /// task is cancelled (cancelling the operation's task too).
    @usableFromInline
    static func run<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        let race = Race<Result<Value, any Error>?>()
        return await withTaskCancellationHandler {
            await race.wait { finish in
                Task {
                    let result: Result<Value, any Error>
                    do { result = .success(try await operation()) } catch { result = .failure(error) }
                    finish(result)
                }
            }
        } onCancel: {
            race.finish(nil)
        }
    }

    /// Waits for `task`'s value, or returns `nil` once `limit` has passed on `sleep` (the task keeps running).
    static func value<Value: Sendable>(
        of task: Task<Value, Never>,
        within limit: Duration,
        sleep: @escaping @Sendable (Duration) async -> Void
    ) async -> Value? {
        let race = Race<Value?>()
        return await race.wait { finish in
            let waiter = Task { finish(await task.value) }
            return Task {
                await sleep(limit)
                finish(nil)
                waiter.cancel()
            }
        }
    }
}

/// The first of several outcomes wins; the others are ignored.
@usableFromInline
final class Race<Outcome: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
        var isFinished = false
        var cancelOnFinish: (@Sendable () -> Void)?
    }
    private let state = LockedValue(State())

    @usableFromInline init() {}

    /// Starts the contenders (`start` gets the finishing function and returns the task to cancel when another
    /// outcome wins) and waits for the first outcome.
    @usableFromInline
    func wait<Contender: Sendable>(
        _ start: (@escaping @Sendable (Outcome) -> Void) -> Task<Contender, Never>
    ) async -> Outcome {
        await withCheckedContinuation { continuation in
            let early: (isFinished: Bool, outcome: Outcome?) = state.withLock { state in
                if state.isFinished { return (true, state.outcome) }
                state.continuation = continuation
                return (false, nil)
            }
            if early.isFinished, let outcome = early.outcome {
                continuation.resume(returning: outcome)
                return
            }
            let task = start { [self] outcome in finish(outcome) }
            let cancelNow = state.withLock { state -> Bool in
                if state.isFinished { return true }
                state.cancelOnFinish = { task.cancel() }
                return false
            }
            if cancelNow { task.cancel() }
        }
    }

    /// Settles the race with `outcome`, unless another outcome came first; returns whether this one won.
    @usableFromInline
    @discardableResult
    func finish(_ outcome: Outcome) -> Bool {
        let (won, continuation, cancel): (Bool, CheckedContinuation<Outcome, Never>?, (@Sendable () -> Void)?) =
            state.withLock { state in
                guard !state.isFinished else { return (false, nil, nil) }
                state.isFinished = true
                state.outcome = outcome
                defer {
                    state.continuation = nil
                    state.cancelOnFinish = nil
                }
                return (true, state.continuation, state.cancelOnFinish)
            }
        cancel?()
        continuation?.resume(returning: outcome)
        return won
    }
}
