import Foundation

/// What a consent settings screen or privacy dashboard shows, read once: each category's row and its details.
///
/// Available at the package's floor (iOS 16, macOS 13, tvOS 16, watchOS 9), where ``ConsentSettings`` (an
/// `@Observable` model, iOS 17 / macOS 14) is not. Read one with ``init(consent:)``, keep it in your own model
/// (an `ObservableObject`, a view model), register ``ConsentManager/observe(_:)`` *before* reading so no change
/// falls in between, and hand each ``ConsentChange`` to ``apply(_:)``; after a change, or when an answer may have
/// expired, refresh ``details`` with ``details(of:)``. Write through the manager
/// (``ConsentManager/setStatus(_:for:source:)`` with source ``ConsentSource/user``), never into the snapshot: the
/// row follows when the manager applies the change. ``ConsentSettings`` is built on exactly these calls.
public struct ConsentSettingsSnapshot: Sendable, Hashable {
    /// One row of the settings screen.
    public struct Entry: Sendable, Hashable, Identifiable {
        /// The category.
        public var category: ConsentCategory
        /// Its current status.
        public var status: ConsentStatus
        /// When the status was last set, or `nil` when it never was (or the ledger could not say).
        public var decidedAt: Date?
        /// Who or what set it last, or `nil` when nobody did.
        public var decidedBy: ConsentSource?

        /// The category identifies the row.
        public var id: ConsentCategory { category }

        /// Creates a row.
        public init(category: ConsentCategory, status: ConsentStatus, decidedAt: Date?, decidedBy: ConsentSource?) {
            self.category = category
            self.status = status
            self.decidedAt = decidedAt
            self.decidedBy = decidedBy
        }
    }

    /// What a privacy dashboard shows about one category beyond its row.
    public struct CategoryDetail: Sendable, Hashable, Identifiable {
        /// How the policy judges the category now: status, permission, when and by which source it was decided,
        /// when it expires, whether it needs asking and why, and whether the child mark, a Global Privacy Control
        /// signal or the region's opt-in rule blocks it.
        public var decision: ConsentDecision
        /// The features the category controls, each with whether it is on and why (lowest bit first).
        public var features: [FeatureReason]

        /// The category identifies the detail.
        public var id: ConsentCategory { decision.category }

        /// Creates a detail.
        public init(decision: ConsentDecision, features: [FeatureReason]) {
            self.decision = decision
            self.features = features
        }
    }

    /// The rows: the policy's categories, and any other category with a status, sorted by name.
    public var entries: [Entry]

    /// The dashboard's details, one per row, in the same order.
    public var details: [CategoryDetail]

    /// Creates a snapshot from its parts.
    public init(entries: [Entry], details: [CategoryDetail]) {
        self.entries = entries
        self.details = details
    }

    /// Reads the current statuses (and, from the audit trail, who set each one and when) and every category's
    /// details from `consent`. Reads the ledger; writes nothing.
    public init(consent: ConsentManager) async {
        let statuses = await consent.allStatuses
        // The last change of each category; a record of a source confirming the status it had is not one.
        let changes = ((try? await consent.records()) ?? []).filter { $0.previousStatus != $0.newStatus }
        let latest = changes.reduce(into: [ConsentCategory: ConsentRecord]()) { $0[$1.category] = $1 }
        let entries = statuses.keys.sortedByName().map { category in
            let record = latest[category].flatMap { $0.newStatus == statuses[category] ? $0 : nil }
            return Entry(
                category: category, status: statuses[category] ?? .unknown, decidedAt: record?.time,
                decidedBy: record?.source)
        }
        self.init(entries: entries, details: await Self.details(of: consent))
    }

    /// Updates the row of the change's category (adding it, in name order, if it had none). Returns whether a row
    /// changed. Does not refresh ``details``: read them again with ``details(of:)``.
    @discardableResult
    public mutating func apply(_ change: ConsentChange) -> Bool {
        Self.apply(change, to: &entries)
    }

    /// The details of every category `consent` knows, sorted by name (the manager notices expired answers first).
    public static func details(of consent: ConsentManager) async -> [CategoryDetail] {
        let decisions = await consent.decisions
        return decisions.keys.sortedByName().compactMap { category in
            decisions[category].map { decision in
                let mapped = consent.policy.features[category] ?? []
                return CategoryDetail(
                    decision: decision,
                    features: mapped.isEmpty ? [] : consent.privacy.reasons(for: consent.privacy.catalog.mask(mapped)))
            }
        }
    }

    static func apply(_ change: ConsentChange, to entries: inout [Entry]) -> Bool {
        let entry = Entry(
            category: change.category, status: change.current, decidedAt: change.time, decidedBy: change.source)
        if let index = entries.firstIndex(where: { $0.category == change.category }) {
            guard entries[index] != entry else { return false }
            entries[index] = entry
        } else {
            entries.append(entry)
            entries = entries.sorted(byName: \.category.rawValue)
        }
        return true
    }
}
