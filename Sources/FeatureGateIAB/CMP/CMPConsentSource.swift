import FeatureGate

/// Follows a consent management platform's answer and applies its changes to a `ConsentManager`.
///
/// Each ``refresh()`` reads the IAB keys from the key-value source, computes ``CMPConsent``, and hands each
/// category's reading to `ConsentManager.applyAnswer(_:for:source:)` with the `cmp` consent source, which applies it
/// only if the CMP's answer changed since it last answered, in this run or an earlier one (the consent ledger
/// keeps it). An unchanged answer is not a decision: refreshing again (every foreground, every defaults change,
/// every launch) records nothing and does not undo a choice the user made in the app since. A reading of unknown
/// (the CMP has not answered, its keys are cleared, or its signal is malformed or half-written) is no answer: it
/// changes nothing and the CMP's last valid answer stays remembered. A category the CMP stops speaking to (GDPR no
/// longer applies, say) keeps its current status.
///
/// When an applicable GPP US section (US National or a state's) carries a GPC subsection, each refresh also hands its
/// `Gpc` field to `ConsentManager.applyGlobalPrivacyControl(_:)`, which acts only when the signal changes (the `gpc`
/// source).
///
/// On Apple platforms, `refreshOnUserDefaultsChanges(settle:)` refreshes once the CMP's writes settle; elsewhere, call
/// ``refresh()`` yourself.
public actor CMPConsentSource {
    /// The consent manager the CMP's answer is applied to.
    public nonisolated let consentManager: ConsentManager
    /// The purpose table.
    public nonisolated let mapping: TCFPurposeMapping
    /// Whose processing the TCF signals are read for.
    public nonisolated let subject: TCFSubject

    private let keys: any CMPKeyValueSource
    /// The refreshes, one at a time: each waits for the last one started, so snapshots are read and applied in order.
    private var refreshes = SerialCalls()
    /// The keys of the last snapshot applied, so an unchanged one is skipped by ``refreshIfChanged()``.
    private var lastSnapshot: [String: CMPValue]?

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
        /// The keys could not be read (the device was locked): nothing was read or applied.
        public var keysWereUnreadable = false
    }

    /// Reads the keys and applies the categories whose CMP reading changed since the CMP last answered.
    ///
    /// Refreshes run one at a time, in the order they were called: each reads its snapshot after the one before
    /// it was applied, so an older snapshot is never applied after a newer one. All categories of one snapshot
    /// are applied in one turn of the consent manager, with no other change in between.
    ///
    /// While the key source is not readable (``CMPKeyValueSource/isReadable``: the device is locked), nothing is
    /// read or applied, and the result says so (``Refresh/keysWereUnreadable``); refresh again once it is.
    @discardableResult
    public func refresh() async -> Refresh {
        await serially { source in
            guard source.keys.isReadable else {
                return Refresh(
                    consent: CMPConsent(keys: [:]), records: [], recordingErrors: [], keysWereUnreadable: true)
            }
            return await source.apply(CMPKey.snapshot(of: source.keys))
        }
    }

    /// Like ``refresh()``, but returns `nil` without applying anything when the keys are exactly those of the last
    /// snapshot applied (another app's or FeatureGate's own defaults write, say), or when `isStopped` says so at
    /// the moment this refresh's turn comes (a ``CMPRefresher`` stopped while the refresh waited behind another).
    @discardableResult
    package func refreshIfChanged(unless isStopped: @escaping @Sendable () -> Bool = { false }) async -> Refresh? {
        await serially { source in
            guard !isStopped(), source.keys.isReadable else { return nil }
            let snapshot = CMPKey.snapshot(of: source.keys)
            return snapshot == source.lastSnapshot ? nil : await source.apply(snapshot)
        }
    }

    private func serially<Result: Sendable>(
        _ body: @escaping @Sendable (isolated CMPConsentSource) async -> Result
    ) async -> Result {
        await refreshes.enqueue(on: self, body).value
    }

    private func apply(_ snapshot: [String: CMPValue]) async -> Refresh {
        lastSnapshot = snapshot
        let consent = CMPConsent(keys: snapshot, mapping: mapping, subject: subject)
        let (records, errors) = await consentManager.applyAnswers(
            consent.decisions, globalPrivacyControl: consent.globalPrivacyControl, source: .cmp)
        return Refresh(consent: consent, records: records, recordingErrors: errors)
    }
}

extension ConsentManager {
    /// Applies every answer, then the Global Privacy Control signal if the snapshot carries one, in one turn of the
    /// actor, so no other change lands between two categories.
    fileprivate func applyAnswers(
        _ answers: [ConsentCategory: ConsentStatus], globalPrivacyControl: Bool?, source: ConsentSource
    ) -> ([ConsentRecord], [ConsentRecordingError]) {
        var records: [ConsentRecord] = []
        var errors: [ConsentRecordingError] = []
        for (category, status) in answers.sorted(by: { $0.key < $1.key }) {
            do {
                if let record = try applyAnswer(status, for: category, source: source) { records.append(record) }
            } catch {
                errors.append(error)
            }
        }
        if let globalPrivacyControl {
            do {
                records += try applyGlobalPrivacyControl(globalPrivacyControl)
            } catch {
                errors.append(error)
            }
        }
        return (records, errors)
    }
}

extension CMPConsentSource {
    /// Refreshes every time protected data becomes available (the device was unlocked): keys that could not be read
    /// while it was locked (``Refresh/keysWereUnreadable``) are read then.
    ///
    /// Follows `UIApplication.protectedDataDidBecomeAvailableNotification` (by name: FeatureGate links no UIKit).
    /// To follow something else, call ``refresh()`` when it says protected data is available.
    ///
    /// - Returns: The token that stops it: cancel it, or release it. A refresh already started finishes.
    public nonisolated func refreshWhenProtectedDataBecomesAvailable() -> ObservationToken {
        refreshWhenProtectedDataBecomesAvailable(NotificationCenterProtectedDataAvailability())
    }

    /// ``refreshWhenProtectedDataBecomesAvailable()`` told by `availability` (tests' doubles).
    package nonisolated func refreshWhenProtectedDataBecomesAvailable(
        _ availability: any ProtectedDataAvailability
    ) -> ObservationToken {
        availability.whenAvailable { [weak self] in
            guard let self else { return }
            Task { await self.refresh() }
        }
    }
}
