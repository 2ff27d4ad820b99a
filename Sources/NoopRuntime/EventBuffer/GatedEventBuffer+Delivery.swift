import FeatureGate

extension GatedEventBuffer {
    /// What one backend's deliveries came to in a flush.
    struct Delivered: Sendable {
        var delivery: BackendDelivery
        /// How many of the batches, from the first, were delivered.
        var deliveredBatches = 0
        /// The server's `Retry-After`, in seconds, when it asked to wait.
        var retryAfter: Double?
    }

    /// Whether a batch taken at `generation` may still be handed to a backend: the gate is open and nothing was
    /// revoked or purged since, whether or not the buffer's observer has been told yet.
    private func mayDeliver(takenAt generation: UInt64) -> Bool {
        // The gate first, then the counter: a revocation undone in between still shows in the counter.
        guard privacy.isEnabled(features) else { return false }
        return state.withLock { state in
            state.catchUp(disables: privacy.disableCount(of: features))
            return state.generation == generation
        }
    }

    /// Delivers `batches` in order, each with its own retries, stopping at the first that is not delivered.
    func deliver(
        _ batches: [EventBatch<Event>],
        to backend: any EventBackend<Event>,
        generation: UInt64
    ) async -> Delivered {
        var outcome = Delivered(
            delivery: BackendDelivery(
                backend: backend.name,
                events: batches.reduce(0) { $0 + $1.elements.count },
                attempts: 0,
                delays: [],
                result: .failed("not attempted")))
        for batch in batches {
            var attempts = 0
            while true {
                guard !Task.isCancelled else {
                    outcome.delivery.result = .cancelled
                    return outcome
                }
                guard mayDeliver(takenAt: generation) else {
                    outcome.delivery.result = .abandonedGateClosed
                    return outcome
                }
                attempts += 1
                outcome.delivery.attempts += 1
                // Checked again on the task that calls the backend, right before the call, so the window between
                // the check and the call does not include the hop to that task.
                switch await Abandonable.run({ [self] in
                    guard mayDeliver(takenAt: generation) else { return false }
                    try await backend.deliver(batch)
                    return true
                }) {
                case .success(true):
                    outcome.deliveredBatches += 1
                case .success(false):
                    outcome.delivery.result = .abandonedGateClosed
                    return outcome
                case nil:
                    outcome.delivery.result = .cancelled
                    return outcome
                case .failure(let error):
                    outcome.delivery.result = .failed(String(describing: error))
                    if let wait = error as? RetryAfterError, wait.delay > .zero {
                        // No further attempt before the server's wait has passed, in this flush or a later one.
                        outcome.retryAfter = Double(wait.delay.components.seconds)
                        return outcome
                    }
                    // A batch the backend refuses to send (it names no install) fails the same way every time.
                    guard attempts < retryPolicy.maxAttempts, !(error is UploadBackendError) else { return outcome }
                    let delay = retryPolicy.delay(afterFailedAttempt: attempts)
                    outcome.delivery.delays.append(delay)
                    await sleep(delay)
                    continue
                }
                break
            }
        }
        outcome.delivery.result = .delivered
        return outcome
    }
}
