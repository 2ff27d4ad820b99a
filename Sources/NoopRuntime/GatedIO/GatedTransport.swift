import FeatureGate

/// A ``Transport`` that reaches the SDK's real client only while its features are enabled.
///
/// Every request checks the gate first (one atomic load). While any of ``features`` is disabled, the request is
/// refused with ``GatedIOError/gateClosed(_:)`` without touching the inner client, and the refusal is counted in
/// the ledger. The refusal allocates nothing: ``send(_:)`` runs on the caller's executor and throws
/// `GatedIOError` with typed throws, so nothing hops executors and nothing is boxed (catch it as `GatedIOError`).
///
/// The one way past a closed gate is ``sendExitRequest(_:permit:)``: a single opt-out or erasure request per
/// armed ``OneShotPermit``.
public struct GatedTransport: Sendable {
    /// The features that must all be enabled for a request to go out.
    public let features: Feature
    @usableFromInline let privacy: PrivacyManager
    @usableFromInline let inner: any Transport
    @usableFromInline let ledger: IOCounter

    /// Wraps `inner`, gated on `features` (all of them) of `privacy`, counting into `counter` (pass one you keep to
    /// read the counts; the default counts for no one).
    ///
    /// - Precondition: `features` is not empty.
    public init(
        _ inner: any Transport, features: Feature, privacy: PrivacyManager, counter: IOCounter = IOCounter()
    ) {
        precondition(!features.isEmpty, "a gated transport needs at least one feature")
        self.inner = inner
        self.features = features
        self.privacy = privacy
        self.ledger = counter
    }

    /// Whether requests go out right now.
    @inlinable public var isOpen: Bool { privacy.isEnabled(features) }

    /// Checks the gate and counts the outcome, without suspending and without allocating.
    ///
    /// ``send(_:)`` calls it first; call it yourself to skip building a request that would be refused.
    @inlinable
    public func admit() throws(GatedIOError) {
        try ledger.admit(.transport, features, of: privacy)
    }

    /// Sends `request` through the inner client, if the gate is open.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`), so a refusal neither hops executors nor
    /// allocates, even when called from the main actor; only a request that passes the gate reaches the inner
    /// client, which runs wherever its own isolation says.
    ///
    /// Cancelling the calling task ends the call at once with `CancellationError`, even when the inner client
    /// ignores cancellation: its request is cancelled and no longer waited for (revocation stays bounded).
    ///
    /// The gate is checked again just before the inner client is called: a request admitted just before a
    /// revocation is not sent after it. The gate says nothing of when the request's data was captured; an SDK
    /// that queues data under a feature compares `PrivacyManager.disableCount(of:)` readings, as
    /// ``GatedEventBuffer`` does.
    ///
    /// - Throws: ``GatedIOError/gateClosed(_:)`` when closed (nothing sent), ``GatedIOError/failed(_:)`` with
    ///   the inner client's error, or with `CancellationError` when cancelled.
    @inlinable
    nonisolated(nonsending)
        public func send(_ request: TransportRequest) async throws(GatedIOError) -> TransportResponse
    {
        try admit()
        return try await abandonable(request, checkingTheGate: true)
    }

    /// Sends through `inner`, giving up (with `CancellationError`) as soon as the calling task is cancelled.
    @usableFromInline
    func abandonable(
        _ request: TransportRequest,
        checkingTheGate: Bool
    ) async throws(GatedIOError) -> TransportResponse {
        let (inner, privacy, features) = (inner, privacy, features)
        let outcome = await Abandonable.run { () async throws -> TransportResponse? in
            // The call moved to a task of its own: the gate may have closed since `admit()`.
            if checkingTheGate && !privacy.isEnabled(features) { return nil }
            return try await inner.send(request)
        }
        switch outcome {
        case .success(let response?): return response
        case .success(nil): throw .gateClosed(features)
        case .failure(let error): throw .failed(error)
        case nil: throw .failed(CancellationError())
        }
    }

    /// Sends one exit request (opt-out, erasure) whether or not the gate is open, if `permit` can be spent.
    ///
    /// The permit is spent before sending, so a second call, even a concurrent one, is refused with
    /// ``GatedIOError/permitUnavailable`` and sends nothing. A send that fails after the permit was spent is not
    /// retried: one attempt is all an exit request gets. Cancelling the calling task ends it as ``send(_:)`` does.
    public func sendExitRequest(
        _ request: TransportRequest,
        permit: OneShotPermit
    ) async throws(GatedIOError) -> TransportResponse {
        guard permit.spend() else {
            ledger.record(.exit, .refused, for: features)
            throw .permitUnavailable
        }
        ledger.record(.exit, .allowed, for: features)
        return try await abandonable(request, checkingTheGate: false)
    }
}
