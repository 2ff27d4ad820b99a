import FeatureGate

/// Follows a consent management platform's answer and applies its changes to a `ConsentManager`.
///
/// Each ``refresh()`` reads the IAB keys from the key-value source, computes ``CMPConsent``, and hands each
/// category's reading to `ConsentManager.applyAnswer(_:for:from:)` with the `cmp` consent source, which applies it
/// only if the CMP's answer changed since it last answered, in this run or an earlier one (the consent ledger
/// keeps it). An unchanged answer is not a decision: refreshing again (every foreground, every defaults change,
/// every launch) records nothing and does not undo a choice the user made in the app since. A reading of unknown
/// (the CMP has not answered, or its signal is malformed) never lifts a denial. A category the CMP stops speaking
/// to (GDPR no longer applies, say) keeps its current status.
///
/// When the GPP string's US National section carries a Global Privacy Control field, each refresh also hands it to
/// `ConsentManager.applyGlobalPrivacyControl(_:)`, which acts only when the signal changes (the `gpc` source).
///
/// On Apple platforms, `refreshOnUserDefaultsChanges()` refreshes whenever the CMP writes; elsewhere, call
/// ``refresh()`` yourself.
public actor CMPConsentSource {
    /// The consent manager the CMP's answer is applied to.
    public nonisolated let consentManager: ConsentManager
    /// The purpose table.
    public nonisolated let mapping: TCFPurposeMapping
    /// Whose processing the TCF signals are read for.
    public nonisolated let subject: TCFSubject

    private let keys: any CMPKeyValueSource

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

    /// Reads the keys and applies the categories whose CMP reading changed since the CMP last answered.
    @discardableResult
    public func refresh() async -> Refresh {
        let consent = CMPConsent(keys: CMPKey.snapshot(of: keys), mapping: mapping, subject: subject)
        var records: [ConsentRecord] = []
        var errors: [ConsentRecordingError] = []
        for (category, status) in consent.decisions.sorted(by: { $0.key < $1.key }) {
            do {
                if let record = try await consentManager.applyAnswer(status, for: category, from: .cmp) {
                    records.append(record)
                }
            } catch {
                errors.append(error)
            }
        }
        if let signal = consent.globalPrivacyControl {
            do {
                records += try await consentManager.applyGlobalPrivacyControl(signal)
            } catch {
                errors.append(error)
            }
        }
        return Refresh(consent: consent, records: records, recordingErrors: errors)
    }
}
