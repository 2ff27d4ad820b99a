import FeatureGate

/// A permit that lets exactly one exit request (an opt-out, an erasure request) through, once per arming.
///
/// The runtime arms a subsystem's permit when it starts the subsystem and hands it over in
/// ``StopReason/featuresDisabled(_:optOut:)`` on the enabled → disabled edge; the subsystem spends it to send
/// its one opt-out request through ``GatedTransport/sendExitRequest(_:permit:)``, the only way past a closed
/// gate. Because spending is a single atomic exchange, two racing senders cannot both win, disabling again
/// finds the permit spent, and a subsystem that never started never had a permit to spend.
///
/// ``SubsystemRuntime/exitPermit`` is the runtime's own permit, for a request that concerns the whole SDK (such
/// as an erasure request after revoking all consent).
///
/// Thread safety: every method is lock-free and may be called from any thread.
public final class OneShotPermit: Sendable {
    private static let idle: UInt8 = 0
    private static let armed: UInt8 = 1
    private static let spent: UInt8 = 2

    private let state: AtomicWord<UInt8>
    private let spends = AtomicWord<Int>(0)

    /// Creates a permit, unarmed unless `armed` is true.
    public init(armed: Bool = false) {
        state = AtomicWord(armed ? Self.armed : Self.idle)
    }

    /// Makes the permit available for one more request. Arming an armed permit changes nothing.
    public func arm() {
        state.store(Self.armed, ordering: .releasing)
    }

    /// Withdraws an unspent permit; a spent one stays spent.
    public func disarm() {
        _ = state.compareExchange(expected: Self.armed, desired: Self.idle, ordering: .acquiringAndReleasing)
    }

    /// Whether a request may be sent now.
    public var isArmed: Bool { state.load(ordering: .acquiring) == Self.armed }

    /// How many times the permit has been spent since it was created.
    public var spendCount: Int { spends.load(ordering: .acquiring) }

    /// Spends the permit: returns `true` exactly once per arming, to the first caller, and `false` otherwise.
    public func spend() -> Bool {
        let won = state.compareExchange(expected: Self.armed, desired: Self.spent, ordering: .acquiringAndReleasing)
            .exchanged
        if won { spends.wrappingAdd(1, ordering: .relaxed) }
        return won
    }

    /// Runs `body` if the permit can be spent, and returns its result; returns `nil` without running it
    /// otherwise.
    public func withPermit<Result: Sendable>(
        _ body: () async throws -> Result
    ) async rethrows -> Result? {
        guard spend() else { return nil }
        return try await body()
    }
}
