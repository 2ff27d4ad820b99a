import FeatureGate

/// Follows a consent management platform's answer and applies its changes to a `ConsentManager`.
///
/// Each ``refresh()`` reads the IAB keys from the key-value source, computes ``CMPConsent``, and for every
/// category whose CMP reading changed since the last refresh calls `ConsentManager.setStatus(_:for:source:)`
/// with the `cmp` consent source. An unchanged answer is not a decision: refreshing again (every
/// foreground, every defaults change) records nothing and does not undo a choice the user made in the app since.
/// A category the CMP stops speaking to (GDPR no longer applies, say) keeps its current status.
///
/// What was last applied lives in memory: the first refresh after launch re-applies the CMP's answer, which
/// records nothing when the ledger already holds it. On Apple platforms, `refreshOnUserDefaultsChanges()`
/// refreshes whenever the CMP writes; elsewhere, call ``refresh()`` yourself.
public actor CMPConsentSource {
    /// The consent manager the CMP's answer is applied to.
    public nonisolated let consentManager: ConsentManager
    /// The purpose table.
    public nonisolated let mapping: TCFPurposeMapping
    /// Whose processing the TCF signals are read for.
    public nonisolated let subject: TCFSubject

    private let keys: any CMPKeyValueSource
    private var lastApplied: [ConsentCategory: ConsentStatus] = [:]

    /// Creates a source; nothing is read until ``refresh()``.
    ///
    /// - Parameters:
    ///   - consentManager: Where the CMP's changes go.
    ///   - keys: Where the CMP writes: `UserDefaultsCMPKeySource` on Apple platforms, a dictionary elsewhere.
    ///   - mapping: Which purposes each category needs.
    ///   - subject: The app's own processing (publisher keys), or an SDK's IAB vendor ID.
    public init(
        consentManager: ConsentManager, keys: any CMPKeyValueSource, mapping: TCFPurposeMapping = .default,
        subject: TCFSubject = .publisher
    ) {
        self.consentManager = consentManager
        self.keys = keys
        self.mapping = mapping
        self.subject = subject
    }

    /// What one refresh read and did.
    public struct Refresh: Sendable {
        /// The CMP's answer as read.
        public var consent: CMPConsent
        /// The records the consent manager appended (none when nothing changed).
        public var records: [ConsentRecord]
        /// Changes the ledger refused; denials among them were applied anyway, grants were not (and are retried
        /// on the next refresh).
        public var recordingErrors: [ConsentRecordingError]
    }

    /// Reads the keys and applies the categories whose CMP reading changed since the last refresh.
    @discardableResult
    public func refresh() async -> Refresh {
        let consent = CMPConsent(keys: CMPKey.snapshot(of: keys), mapping: mapping, subject: subject)
        var changes: [(ConsentCategory, ConsentStatus, previous: ConsentStatus?)] = []
        for category in consent.decisions.keys.sorted() {
            let status = consent.decisions[category]!
            if lastApplied[category] != status { changes.append((category, status, lastApplied[category])) }
        }
        for category in lastApplied.keys where consent.decisions[category] == nil { lastApplied[category] = nil }
        // Claimed before awaiting, so a refresh that runs while this one waits does not apply them again.
        for (category, status, _) in changes { lastApplied[category] = status }
        var records: [ConsentRecord] = []
        var errors: [ConsentRecordingError] = []
        for (category, status, previous) in changes {
            do {
                if let record = try await consentManager.setStatus(status, for: category, source: .cmp) {
                    records.append(record)
                }
            } catch {
                errors.append(error)
                if !error.applied, lastApplied[category] == status { lastApplied[category] = previous }
            }
        }
        return Refresh(consent: consent, records: records, recordingErrors: errors)
    }
}
