import Foundation
import Observation

/// The model behind a consent settings screen or privacy dashboard: each category's status, when and by whom it
/// was decided, and (``details``) when it expires, whether to ask again and why, what blocks it, and the features
/// it controls with why each is on or off.
///
/// It reflects every change, whatever its source (the screen itself, a consent platform, App Tracking
/// Transparency, revoke-all), in the order the ``ConsentManager`` applied them, and its setters go through the
/// manager, so every change from the screen is recorded in the audit trail with source ``ConsentSource/user``.
///
/// ```swift
/// let settings = await ConsentSettings(consent: consent)
/// // SwiftUI: Toggle(isOn: ...) { } reading settings.entries, writing through settings.set(_:for:)
/// await settings.set(.granted, for: .analytics)
/// ```
///
/// It is `@Observable` and main-actor isolated: views that read ``entries`` update when a category changes.
/// Changes from other sources arrive asynchronously, a moment after the manager applied them.
@MainActor
@Observable
public final class ConsentSettings {
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
    public private(set) var entries: [Entry]

    /// The dashboard's details, one per row, in the same order. Refreshed after every change the manager applies;
    /// call ``reload()`` after changing what the manager knows about the user (region, child mark, GPC) or at a
    /// moment an answer may have expired.
    public private(set) var details: [CategoryDetail] = []

    /// The last error a setter met: the ledger refused the record. `nil` after a setter succeeds.
    public private(set) var lastError: ConsentRecordingError?

    /// The consent manager the model reads and writes.
    public let consent: ConsentManager

    @ObservationIgnored private let token: ObservationToken
    @ObservationIgnored private let changes: AsyncStream<ConsentChange>.Continuation

    /// Reads the current statuses (and, from the audit trail, who set each one and when), then follows changes.
    public init(consent: ConsentManager) async {
        self.consent = consent
        let (stream, continuation) = AsyncStream.makeStream(of: ConsentChange.self, bufferingPolicy: .unbounded)
        // Registered before reading, so no change falls between the read and the first callback; one that is in
        // both is applied twice, which changes nothing.
        token = consent.observe { continuation.yield($0) }
        changes = continuation
        let statuses = await consent.allStatuses
        // The last change of each category; a record of a source confirming the status it had is not one.
        let changes = ((try? await consent.records()) ?? []).filter { $0.previousStatus != $0.newStatus }
        let latest = changes.reduce(into: [ConsentCategory: ConsentRecord]()) { $0[$1.category] = $1 }
        entries = statuses.keys.sorted().map { category in
            let record = latest[category].flatMap { $0.newStatus == statuses[category] ? $0 : nil }
            return Entry(
                category: category, status: statuses[category] ?? .unknown, decidedAt: record?.time,
                decidedBy: record?.source)
        }
        details = await Self.details(of: consent)
        // One consumer, so changes apply in the order the manager made them.
        Task { [weak self] in
            for await change in stream {
                guard let self else { return }
                self.apply(change)
                await self.reload()
            }
        }
    }

    deinit {
        token.cancel()
        changes.finish()
    }

    /// Reads every category's ``details`` again from the consent manager (which notices expired answers first).
    public func reload() async {
        let fresh = await Self.details(of: consent)
        if fresh != details { details = fresh }
    }

    /// The detail of `category`, or `nil` when it has no row.
    public func detail(for category: ConsentCategory) -> CategoryDetail? {
        details.first { $0.decision.category == category }
    }

    private static func details(of consent: ConsentManager) async -> [CategoryDetail] {
        let decisions = await consent.decisions
        return decisions.keys.sorted().compactMap { category in
            decisions[category].map { decision in
                let mapped = consent.policy.features[category] ?? []
                return CategoryDetail(
                    decision: decision,
                    features: mapped.isEmpty ? [] : consent.privacy.reasons(for: consent.privacy.catalog.mask(mapped)))
            }
        }
    }

    /// The status of `category` as the screen shows it.
    public func status(for category: ConsentCategory) -> ConsentStatus {
        entries.first { $0.category == category }?.status ?? .unknown
    }

    /// Sets `category` to `status` through the consent manager, recorded with source ``ConsentSource/user``.
    ///
    /// The row updates when the manager applies the change (a refused grant never applies). A ledger failure is
    /// kept in ``lastError``.
    public func set(_ status: ConsentStatus, for category: ConsentCategory) async {
        do {
            try await consent.setStatus(status, for: category, source: .user)
            lastError = nil
        } catch {
            lastError = error
        }
    }

    /// Denies every category through the consent manager, recorded with source ``ConsentSource/user``.
    public func denyAll() async {
        do {
            try await consent.denyAll(source: .user)
            lastError = nil
        } catch {
            lastError = error
        }
    }

    private func apply(_ change: ConsentChange) {
        let entry = Entry(
            category: change.category, status: change.current, decidedAt: change.time, decidedBy: change.source)
        if let index = entries.firstIndex(where: { $0.category == change.category }) {
            if entries[index] != entry { entries[index] = entry }
        } else {
            entries.append(entry)
            entries.sort { $0.category < $1.category }
        }
    }
}
