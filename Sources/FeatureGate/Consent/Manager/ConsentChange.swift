import Foundation

/// One applied change of a consent category's status, as a ``ConsentManager/observe(_:)`` callback sees it.
public struct ConsentChange: Sendable, Hashable {
    /// The category whose status changed.
    public let category: ConsentCategory
    /// The status before the change (a stale grant reads as `unknown`).
    public let previous: ConsentStatus
    /// The status after the change.
    public let current: ConsentStatus
    /// Who or what made the change.
    public let source: ConsentSource
    /// When the change was made.
    public let time: Date
    /// Whether the change is in the consent ledger. `false` only for a denial the ledger refused, which is
    /// applied anyway.
    public let isRecorded: Bool

    /// Creates a change.
    public init(
        category: ConsentCategory,
        previous: ConsentStatus,
        current: ConsentStatus,
        source: ConsentSource,
        time: Date,
        isRecorded: Bool
    ) {
        self.category = category
        self.previous = previous
        self.current = current
        self.source = source
        self.time = time
        self.isRecorded = isRecorded
    }
}
