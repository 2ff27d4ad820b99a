import FeatureGate
import Foundation

/// The consent decisions an uploaded element carries: each decided category, granted (`true`) or refused
/// (`false`), as `"consent": {"categoryPreferences": {"analytics": true, "advertising": false}}` on the wire (the
/// shape Segment reads as `context.consent.categoryPreferences`).
///
/// A ``GatedEventBuffer`` given a `ConsentManager` takes one when each event is tracked, not when it is uploaded,
/// so a server can tell an event tracked before a refusal from one tracked after it. Only decided categories are
/// in it: `granted` is `true`; `denied`, `restricted` and `expired` (an answer that ran out is no longer consent)
/// are `false`; `unknown` is left out. When nothing is decided it is empty, and ``UploadBackend`` leaves the
/// `consent` key out rather than send an empty object, which Segment reads as "everything denied".
///
/// A backend that wants another shape (one consent state per batch, say) renders it from this value.
public struct ConsentPreferences: Sendable, Hashable {
    /// Each decided category: `true` when granted, `false` when refused or expired.
    public let categoryPreferences: [ConsentCategory: Bool]

    /// The preferences given.
    public init(categoryPreferences: [ConsentCategory: Bool]) {
        self.categoryPreferences = categoryPreferences
    }

    /// The decided categories of `statuses` (`unknown` left out).
    public init(statuses: [ConsentCategory: ConsentStatus]) {
        var decided: [ConsentCategory: Bool] = [:]
        for (category, status) in statuses {
            switch status {
            case .unknown: continue
            case .granted: decided[category] = true
            case .denied, .restricted, .expired: decided[category] = false
            }
        }
        categoryPreferences = decided
    }

    /// No category decided: nothing to send.
    public static let none = ConsentPreferences(categoryPreferences: [:])

    /// Whether no category is decided.
    public var isEmpty: Bool { categoryPreferences.isEmpty }

    /// `{"categoryPreferences": {…}}` as JSON values, keyed by the categories' raw names.
    var wireValue: [String: [String: Bool]] {
        [
            "categoryPreferences": Dictionary(
                uniqueKeysWithValues: categoryPreferences.map { ($0.key.rawValue, $0.value) })
        ]
    }
}

/// A consent change as an element of a batch: the server reads `{"id", "anonymousId", "type":
/// "consentPreferenceUpdated", "consent"}` (what Segment calls "Segment Consent Preference Updated").
///
/// A ``GatedEventBuffer`` given a `ConsentManager` queues one after every change the manager applies while the
/// buffer is open, in order with the events; a change that closes the buffer's features queues nothing (its
/// refusal purges the queue instead).
public struct ConsentPreferenceUpdate: Sendable, Hashable {
    /// A version 4 UUID, derived as event identifiers are, the same in every batch that carries the element.
    public let id: UUID
    /// The decisions in force after the change.
    public let consent: ConsentPreferences
    /// The SDK's user identifier when the change was made, if it set one (``GatedEventBuffer/userId``).
    public let userId: String?

    /// Creates an element.
    public init(id: UUID, consent: ConsentPreferences, userId: String? = nil) {
        self.id = id
        self.consent = consent
        self.userId = userId
    }
}
