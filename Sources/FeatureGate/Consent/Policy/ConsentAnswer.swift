import Foundation

/// The last answer the ledger (or the gate state) holds for a category: what ``ConsentPolicy`` judges.
public struct ConsentAnswer: Sendable, Hashable {
    /// The answer: `granted`, `denied`, `restricted`, or `unknown` when it was cleared. Never `expired`.
    public var status: ConsentStatus
    /// When it was given; `nil` when only the gate state kept it (a refusal the ledger could not record).
    public var decidedAt: Date?
    /// Who gave it; `nil` when only the gate state kept it.
    public var source: ConsentSource?
    /// The policy version it was given under.
    public var policyVersion: Int
    /// Whether a grant can be trusted: `false` when the ledger has entries that cannot be decoded.
    public var isTrusted: Bool
    /// Whether an `expired` record followed it: it has expired whatever the lifetimes say now.
    public var isExpiryRecorded: Bool

    /// Creates an answer.
    public init(
        status: ConsentStatus,
        decidedAt: Date?,
        source: ConsentSource?,
        policyVersion: Int,
        isTrusted: Bool = true,
        isExpiryRecorded: Bool = false
    ) {
        self.status = status
        self.decidedAt = decidedAt
        self.source = source
        self.policyVersion = policyVersion
        self.isTrusted = isTrusted
        self.isExpiryRecorded = isExpiryRecorded
    }
}

extension ConsentAnswer {
    /// The answer `record` gives.
    init(_ record: ConsentRecord, isTrusted: Bool) {
        self.init(
            status: record.newStatus, decidedAt: record.time, source: record.source,
            policyVersion: record.policyVersion, isTrusted: isTrusted)
    }
}
