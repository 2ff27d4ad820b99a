import FeatureGate

/// Per-feature counts of the I/O that gated wrappers allowed and refused, so tests and apps can assert that
/// nothing happened. (Formerly `IOLedger`: not to be confused with the consent ledger, the audit trail.)
///
/// Every gated wrapper (``GatedStorage``, ``GatedTransport``, ``GatedEventBuffer``) records each call it
/// admits or refuses, under each flag of the features it is gated on: an operation gated on
/// `[.analytics, .contacts]` counts once under `analytics` and once under `contacts`. ``totals`` counts every
/// operation once.
///
/// ## Thread safety and cost
/// Recording is one relaxed atomic add per flag plus one for the totals: lock-free and allocation-free, so the
/// refused path stays allocation-free. Reading walks the counters without a lock; a snapshot taken while other
/// threads record may mix counts from just before and just after a concurrent operation.
public final class IOCounter: @unchecked Sendable {
    /// What kind of operation a count is about.
    public enum Operation: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// A read, write or remove through ``GatedStorage``.
        case storage
        /// A request through ``GatedTransport``.
        case transport
        /// An event given to ``GatedEventBuffer/track(_:)``.
        case event
        /// A one-shot exit request (opt-out, erasure) sent past a closed gate with a ``OneShotPermit``.
        case exit
        /// A purge: local data deleted on an enabled → disabled edge. Purges run while the gate is closed.
        case purge

        /// The operation's name, as the demo prints it.
        public var description: String {
            switch self {
            case .storage: "storage"
            case .transport: "transport"
            case .event: "event"
            case .exit: "exit"
            case .purge: "purge"
            }
        }
    }

    /// Whether the gate let an operation through.
    public enum Outcome: Int, Sendable, Hashable, CaseIterable {
        /// The gate was open (or, for exit requests, the permit was available) and the operation went ahead.
        case allowed
        /// The gate was closed (or the permit spent) and the operation never reached the underlying resource.
        case refused
    }

    /// Bit positions that get their own counters: every bit a ``Feature`` can hold.
    @usableFromInline static let flagSlots = UInt.bitWidth
    /// The slot after the flags, which counts every operation once.
    @usableFromInline static let totalsSlot = UInt.bitWidth
    @usableFromInline static let slotCount = UInt.bitWidth + 1
    // The counts of cases, from the last case of each enum rather than from `allCases`: `record(_:_:for:)` is
    // inlined into callers, where these fold to constants, while `allCases` and a `static let` are calls (two of
    // each per refusal, a third of the cost of a closed gate). `init` checks them against `allCases`.
    @inlinable static var operationCount: Int { Operation.purge.rawValue + 1 }
    @inlinable static var outcomeCount: Int { Outcome.refused.rawValue + 1 }
    @inlinable static var countersPerSlot: Int { operationCount * outcomeCount }

    @usableFromInline let counters: AtomicWordBuffer<Int>

    /// Creates a ledger with every count at zero.
    public init() {
        precondition(
            Self.operationCount == Operation.allCases.count && Self.outcomeCount == Outcome.allCases.count,
            "IOLedger.operationCount and outcomeCount must name the last case of each enum")
        counters = AtomicWordBuffer(repeating: 0, count: Self.slotCount * Self.countersPerSlot)
    }

    @inlinable
    static func index(slot: Int, _ operation: Operation, _ outcome: Outcome) -> Int {
        slot * countersPerSlot + operation.rawValue * outcomeCount + outcome.rawValue
    }

    /// Counts one operation under each flag of `features` and once in the totals. Lock-free, allocation-free.
    @inlinable
    public func record(_ operation: Operation, _ outcome: Outcome, for features: Feature) {
        var bits = features.rawValue
        while bits != 0 {
            let slot = bits.trailingZeroBitCount
            counters[Self.index(slot: slot, operation, outcome)].wrappingAdd(1, ordering: .relaxed)
            bits &= bits &- 1
        }
        counters[Self.index(slot: Self.totalsSlot, operation, outcome)].wrappingAdd(1, ordering: .relaxed)
    }

    /// The counts recorded under `flag`, a single feature flag.
    ///
    /// For a set of several flags, the counts of each flag are added up, so an operation gated on two of them
    /// counts twice; use ``totals`` to count each operation once.
    public func counts(for features: Feature) -> IOCounts {
        var result = IOCounts()
        var bits = features.rawValue
        while bits != 0 {
            result += counts(slot: bits.trailingZeroBitCount)
            bits &= bits &- 1
        }
        return result
    }

    /// Every operation recorded, each counted once.
    public var totals: IOCounts { counts(slot: Self.totalsSlot) }

    /// The counts of every flag that recorded anything, lowest bit first.
    public func snapshot() -> [(feature: Feature, counts: IOCounts)] {
        (0..<Self.flagSlots).compactMap { slot in
            let counts = counts(slot: slot)
            return counts.isZero ? nil : (Feature(rawValue: 1 << UInt(slot)), counts)
        }
    }

    private func counts(slot: Int) -> IOCounts {
        var result = IOCounts()
        for operation in Operation.allCases {
            for outcome in Outcome.allCases {
                result[operation, outcome] =
                    counters[Self.index(slot: slot, operation, outcome)].load(ordering: .relaxed)
            }
        }
        return result
    }
}
