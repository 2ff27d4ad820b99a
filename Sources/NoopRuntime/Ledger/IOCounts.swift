/// How many operations of each kind a gate allowed and refused, for one feature or in total.
public struct IOCounts: Sendable, Hashable, CustomStringConvertible {
    private var values: [Int]

    /// All counts at zero.
    public init() {
        values = Array(repeating: 0, count: IOCounter.Operation.allCases.count * IOCounter.Outcome.allCases.count)
    }

    /// The count of `operation` with `outcome`.
    public subscript(operation: IOCounter.Operation, outcome: IOCounter.Outcome) -> Int {
        get { values[operation.rawValue * IOCounter.Outcome.allCases.count + outcome.rawValue] }
        set { values[operation.rawValue * IOCounter.Outcome.allCases.count + outcome.rawValue] = newValue }
    }

    /// Storage reads, writes and removes that went through.
    public var storageAllowed: Int { self[.storage, .allowed] }
    /// Storage calls refused at the closed gate.
    public var storageRefused: Int { self[.storage, .refused] }
    /// Requests that went through.
    public var transportAllowed: Int { self[.transport, .allowed] }
    /// Requests refused at the closed gate.
    public var transportRefused: Int { self[.transport, .refused] }
    /// Events accepted into an event buffer.
    public var eventsAccepted: Int { self[.event, .allowed] }
    /// Events refused at the closed gate.
    public var eventsRefused: Int { self[.event, .refused] }
    /// One-shot exit requests (opt-out, erasure) sent.
    public var exitRequestsSent: Int { self[.exit, .allowed] }
    /// Exit requests refused because the permit was not armed or already spent.
    public var exitRequestsRefused: Int { self[.exit, .refused] }
    /// Purges run.
    public var purges: Int { self[.purge, .allowed] }

    /// Whether nothing at all was counted.
    public var isZero: Bool { values.allSatisfy { $0 == 0 } }

    /// Whether nothing reached a resource: no storage call or request allowed, no event accepted, no exit
    /// request sent and no purge run. Refusals are allowed: they are what a closed gate does.
    public var isSilent: Bool {
        storageAllowed == 0 && transportAllowed == 0 && eventsAccepted == 0 && exitRequestsSent == 0 && purges == 0
    }

    /// Adds the counts of `right` to `left`.
    public static func += (left: inout IOCounts, right: IOCounts) {
        for index in left.values.indices { left.values[index] += right.values[index] }
    }

    /// `storage: 2 allowed; transport: 1 allowed, 3 refused`: what was allowed and refused per operation, skipping
    /// operations with no count and counts of zero; `nothing` when nothing was counted.
    public var description: String {
        let parts = IOCounter.Operation.allCases.compactMap { operation -> String? in
            let allowed = self[operation, .allowed]
            let refused = self[operation, .refused]
            guard allowed != 0 || refused != 0 else { return nil }
            let counts = [allowed != 0 ? "\(allowed) allowed" : nil, refused != 0 ? "\(refused) refused" : nil]
            return "\(operation): " + counts.compactMap { $0 }.joined(separator: ", ")
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }
}
