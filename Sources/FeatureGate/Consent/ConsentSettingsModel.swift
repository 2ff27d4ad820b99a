import Foundation
import Observation

/// The model of a consent settings screen: each category's status, when and by whom it was last decided, and
/// setters that go through the ``ConsentManager``.
///
/// It is `@Observable` and main-actor isolated, so SwiftUI views (or `withObservationTracking`) update when any
/// source changes consent: the user here, a consent platform, App Tracking Transparency, revoke-all. It follows
/// the manager through ``ConsentManager/observe(_:)`` and stores nothing itself: the ledger stays the record.
@MainActor
@Observable
public final class ConsentSettingsModel {
    /// One row of the screen.
    public struct Entry: Sendable, Hashable, Identifiable {
        /// The category.
        public var category: ConsentCategory
        /// Its current status.
        public var status: ConsentStatus
        /// When it was last decided, or `nil` when never (or when the ledger could not be read).
        public var decidedAt: Date?
        /// Who decided it last, or `nil` when never (or when the ledger could not be read).
        public var decidedBy: ConsentSource?

        /// The category.
        public var id: ConsentCategory { category }
    }

    /// The policy's categories (and any other category with a status), sorted by name.
    public private(set) var entries: [Entry] = []
    /// The last change the ledger refused through this model's setters, if any.
    public private(set) var lastError: ConsentRecordingError?

    /// The manager the model reads and writes through.
    @ObservationIgnored public let consentManager: ConsentManager
    @ObservationIgnored private var token: ObservationToken?
    @ObservationIgnored private var appliedSequence: [ConsentCategory: Int] = [:]

    /// Reads the current statuses (and, from the ledger, who decided each and when) and starts following changes.
    public init(consentManager: ConsentManager) async {
        self.consentManager = consentManager
        // Register first, so no change made while the snapshot is read is missed. Changes are numbered in the
        // order the manager applied them; a change that reaches the main actor late never overwrites a newer one.
        let sequence = LockedValue(0)
        token = consentManager.observe { [weak self] change in
            let number = sequence.withLock { value -> Int in
                value += 1
                return value
            }
            Task { @MainActor [weak self] in self?.apply(change, number: number) }
        }
        let statuses = await consentManager.allStatuses
        var last: [ConsentCategory: ConsentRecord] = [:]
        for record in (try? await consentManager.records()) ?? [] { last[record.category] = record }
        for (category, status) in statuses where appliedSequence[category] == nil {
            let record = last[category].flatMap { $0.newStatus == status ? $0 : nil }
            upsert(Entry(category: category, status: status, decidedAt: record?.time, decidedBy: record?.source))
        }
    }

    /// The row of `category`, if the model has one.
    public func entry(for category: ConsentCategory) -> Entry? {
        entries.first { $0.category == category }
    }

    /// Sets `category` to `status` as the user's choice, through the consent manager (recorded in the ledger).
    ///
    /// The row updates when the manager applies the change. A refusal by the ledger is kept in ``lastError``;
    /// a denial is applied anyway, a grant is not (see ``ConsentManager/setStatus(_:for:source:)``).
    public func setStatus(_ status: ConsentStatus, for category: ConsentCategory) async {
        do {
            try await consentManager.setStatus(status, for: category, source: .user)
            lastError = nil
        } catch {
            lastError = error
        }
    }

    private func apply(_ change: ConsentChange, number: Int) {
        guard number > appliedSequence[change.category] ?? 0 else { return }
        appliedSequence[change.category] = number
        upsert(
            Entry(category: change.category, status: change.current, decidedAt: change.time, decidedBy: change.source))
    }

    private func upsert(_ entry: Entry) {
        if let index = entries.firstIndex(where: { $0.category == entry.category }) {
            if entries[index] != entry { entries[index] = entry }
        } else {
            entries.append(entry)
            entries.sort { $0.category < $1.category }
        }
    }
}
