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
/// Its own changes show when the setter returns: ``set(_:for:)`` and ``denyAll()`` update ``entries`` and
/// ``details`` before they return, so a SwiftUI toggle bound to them does not flip back. Changes from other sources
/// arrive asynchronously, a moment after the manager applied them.
///
/// ## Availability
/// Observation (`@Observable`) needs iOS 17, macOS 14, tvOS 17, watchOS 10 or visionOS 1, so this model does too.
/// Below that (down to the package's floor, iOS 16 / macOS 13 / tvOS 16 / watchOS 9), build the same screen from
/// ``ConsentSettingsSnapshot``: read one with ``ConsentSettingsSnapshot/init(consent:)``, keep it in your own
/// `ObservableObject`, and feed it the manager's changes (``ConsentManager/observe(_:)``) through
/// ``ConsentSettingsSnapshot/apply(_:)``; write through ``ConsentManager/setStatus(_:for:source:)`` with source
/// ``ConsentSource/user``. This model does exactly that.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class ConsentSettings {
    /// One row of the settings screen (``ConsentSettingsSnapshot/Entry``).
    public typealias Entry = ConsentSettingsSnapshot.Entry

    /// What a privacy dashboard shows about one category beyond its row (``ConsentSettingsSnapshot/CategoryDetail``).
    public typealias CategoryDetail = ConsentSettingsSnapshot.CategoryDetail

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
        let snapshot = await ConsentSettingsSnapshot(consent: consent)
        entries = snapshot.entries
        details = snapshot.details
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
        let fresh = await ConsentSettingsSnapshot.details(of: consent)
        if fresh != details { details = fresh }
    }

    /// The detail of `category`, or `nil` when it has no row.
    public func detail(for category: ConsentCategory) -> CategoryDetail? {
        details.first { $0.decision.category == category }
    }

    /// The status of `category` as the screen shows it.
    public func status(for category: ConsentCategory) -> ConsentStatus {
        entries.first { $0.category == category }?.status ?? .unknown
    }

    /// Sets `category` to `status` through the consent manager, recorded with source ``ConsentSource/user``.
    ///
    /// When it returns, the row and ``details`` show what the manager now holds: the change, once applied (a
    /// refused grant never applies; a grant held for another process's lock applies once recorded, and shows then).
    /// A ledger failure, or a held change (``ConsentRecordingError/isHeld``), is kept in ``lastError``.
    ///
    /// A grant turns on the features its category maps (by default `analytics` maps analytics and tags and
    /// attributes), whatever the configuration enabled; a refusal turns them off.
    public func set(_ status: ConsentStatus, for category: ConsentCategory) async {
        do {
            try await consent.setStatus(status, for: category, source: .user)
            lastError = nil
        } catch {
            lastError = error
        }
        await showCurrent([category])
    }

    /// Denies every category through the consent manager, recorded with source ``ConsentSource/user``. The rows and
    /// ``details`` show the denials when it returns.
    public func denyAll() async {
        do {
            try await consent.denyAll(source: .user)
            lastError = nil
        } catch {
            lastError = error
        }
        await showCurrent(entries.map(\.category))
    }

    /// Shows the manager's current status of `categories` in their rows, and reloads ``details``: what a setter
    /// changed is on screen when it returns, without waiting for the change to come round through observation (it
    /// comes too, later, and changes nothing then).
    private func showCurrent(_ categories: [ConsentCategory]) async {
        var updated = entries
        for category in categories {
            let decision = await consent.decision(for: category)
            let entry = Entry(
                category: category, status: decision.status, decidedAt: decision.decidedAt,
                decidedBy: decision.source)
            if let index = updated.firstIndex(where: { $0.category == category }) {
                // The row keeps who decided it when the status is the one it shows (a confirmation is no change).
                if updated[index].status != entry.status { updated[index] = entry }
            } else {
                updated.append(entry)
                updated = updated.sorted(byName: \.category.rawValue)
            }
        }
        if updated != entries { entries = updated }
        await reload()
    }

    private func apply(_ change: ConsentChange) {
        var updated = entries
        if ConsentSettingsSnapshot.apply(change, to: &updated) { entries = updated }
    }
}
