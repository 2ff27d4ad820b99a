extension SubsystemRuntime {
    /// Runs one call into a subsystem so that ``cancelCallInFlight()`` can cancel it and stop waiting for it;
    /// `nil` when it was cancelled that way.
    func call<Value: Sendable>(
        _ index: Int,
        _ name: String,
        _ body: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        let subsystem = state.withLock { $0.entries[index].subsystem.name }
        let race = Race<Result<Value, any Error>?>()
        let handle = CallInFlight(subsystem: subsystem, call: name, cancel: { race.finish(nil) })
        state.withLock { $0.callInFlight = handle }
        defer { state.withLock { $0.callInFlight = nil } }
        return await race.wait { finish in
            Task {
                do { finish(.success(try await body())) } catch { finish(.failure(error)) }
            }
        }
    }

    /// Cancels the subsystem call under way, if any, and stops waiting for it: the pass moves on (a stop that is
    /// cancelled is still followed by the purge). Returns what was cancelled.
    ///
    /// Revoke-all calls it when its deadline passes; a subsystem that ignores cancellation is left to finish on
    /// its own, and the runtime no longer waits for it.
    public func cancelCallInFlight() -> CancelledOperation? {
        // Reported only if the cancellation won: a call that finished meanwhile was not cancelled.
        guard let handle = state.withLock({ $0.callInFlight }), handle.cancel() else { return nil }
        return CancelledOperation(subsystem: handle.subsystem, operation: handle.call)
    }
}

/// A call into a subsystem that the runtime is waiting for.
struct CallInFlight: Sendable {
    let subsystem: String
    let call: String
    /// Stops waiting for the call; `true` if that came before the call finished (and only the first time).
    let cancel: @Sendable () -> Bool
}
