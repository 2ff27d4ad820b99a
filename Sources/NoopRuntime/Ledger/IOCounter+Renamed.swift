import FeatureGate

/// Renamed ``IOCounter``: "ledger" is the consent audit trail (`FileConsentLedger`); these are I/O counts.
@available(*, deprecated, renamed: "IOCounter")
public typealias IOLedger = IOCounter

extension GatedStorage {
    /// Renamed `init(_:features:privacy:counter:)`: the I/O counts are an ``IOCounter``, not a ledger.
    @available(*, deprecated, renamed: "init(_:features:privacy:counter:)")
    public init(_ inner: any Storage, features: Feature, privacy: PrivacyManager, ledger: IOCounter) {
        self.init(inner, features: features, privacy: privacy, counter: ledger)
    }
}

extension GatedTransport {
    /// Renamed `init(_:features:privacy:counter:)`: the I/O counts are an ``IOCounter``, not a ledger.
    @available(*, deprecated, renamed: "init(_:features:privacy:counter:)")
    public init(_ inner: any Transport, features: Feature, privacy: PrivacyManager, ledger: IOCounter) {
        self.init(inner, features: features, privacy: privacy, counter: ledger)
    }
}

extension GatedEventBuffer {
    /// Renamed `init(features:capacity:privacy:backends:retryPolicy:counter:sleep:flushDeadline:now:)`: the I/O
    /// counts are an ``IOCounter``, not a ledger.
    @available(
        *, deprecated, renamed: "init(features:capacity:privacy:backends:retryPolicy:counter:sleep:flushDeadline:now:)"
    )
    public convenience init(
        features: Feature,
        capacity: Int,
        privacy: PrivacyManager,
        backends: [any EventBackend<Event>],
        retryPolicy: RetryPolicy = .standard,
        ledger: IOCounter,
        sleep: @escaping Sleeper = { try? await Task.sleep(for: $0) },
        flushDeadline: Duration = .seconds(30),
        now: (@Sendable () -> Double)? = nil
    ) {
        self.init(
            features: features, capacity: capacity, privacy: privacy, backends: backends, retryPolicy: retryPolicy,
            counter: ledger, sleep: sleep, flushDeadline: flushDeadline, now: now)
    }
}
