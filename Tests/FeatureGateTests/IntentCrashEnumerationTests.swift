import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A fold of durable take-aways (``IntentJournal``) crashed after each of its durable steps in turn, for a denial, a
/// disable and revoke-all's pending record: every resulting directory, read by a fresh start and then folded again,
/// keeps the acknowledged "no", is never wider than before, records it once, and the ledger and the gate state agree.
@Suite struct IntentCrashEnumerationTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    enum TakeAway: String, CaseIterable {
        case denial, disable, revoke
    }

    static func intent(_ kind: TakeAway) -> TakeAwayIntent {
        let record = ConsentRecord(
            category: .analytics, previousStatus: .granted, newStatus: .denied, time: Date(), policyVersion: 1,
            source: .user)
        let (state, ledger) = (PrivacyDataDirectory.stateFileName, PrivacyDataDirectory.consentLedgerFileName)
        switch kind {
        case .denial:
            return TakeAwayIntent(
                stateFile: state, ledgerFile: ledger, disable: .analytics, refuse: [.analytics], records: [record])
        case .disable:
            return TakeAwayIntent(stateFile: state, disable: .messageCenter)
        case .revoke:
            return TakeAwayIntent(
                stateFile: state, ledgerFile: ledger, disable: FeatureCatalog.builtIn.allFeatures,
                refuse: [.analytics], records: [record],
                pendingRevocation: PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false))
        }
    }

    /// Whether `launch` shows `kind`'s "no" in force, and nothing wider than before it.
    static func holds(_ kind: TakeAway, _ privacy: PrivacyManager, _ consent: ConsentManager) async -> Bool {
        let status = await consent.status(for: .analytics)
        switch kind {
        case .denial:
            return !privacy.isEnabled(.analytics) && status == .denied && privacy.isEnabled(.messageCenter)
        case .disable:
            return !privacy.isEnabled(.messageCenter) && privacy.isEnabled(.analytics) && status == .granted
        case .revoke:
            return privacy.isEnabled([]) && status == .denied && privacy.pendingRevocation != nil
        }
    }

    /// Folds the intents of `data` holding its lock, with at most `steps` durable steps (all when `nil`); returns
    /// how many ran.
    static func fold(_ data: PrivacyDataDirectory, steps: Int?) -> Int {
        let budget = IntentJournal.CrashBudget(steps: steps ?? .max)
        IntentJournal.$stepsBeforeCrash.withValue(budget) {
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {}
        }
        return budget.taken
    }

    @Test(arguments: TakeAway.allCases)
    func aFoldCrashedAfterAnyStepKeepsTheNoAndEndsWhereAFullFoldEnds(kind: TakeAway) async throws {
        var explored = 0
        var failures: [String] = []
        for steps in 0..<32 {
            let directory = TemporaryDirectory()
            defer { directory.cleanUp() }
            let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
            let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
            try await consent.setStatus(.granted, for: .analytics, source: .user)
            privacy.enableFeatures(.messageCenter)
            try IntentJournal.record(Self.intent(kind), in: data.url.path(percentEncoded: false))

            let taken = Self.fold(data, steps: steps)
            explored += 1
            // The crashed state, as a fresh start reads it (intents over the files).
            let crashed = launchGateAndConsent(on: data, policy: Self.policy)
            if !(await Self.holds(kind, crashed.privacy, crashed.consent)) {
                failures.append("\(kind) crashed after \(steps) steps: the no is not in force at the next start")
            }
            // Then a full fold (the next holder of the lock): the files agree, the record is there once.
            _ = Self.fold(data, steps: nil)
            let records = try FileConsentLedger(url: data.consentLedgerFile).load().records
            let denials = records.filter { $0.category == .analytics && $0.newStatus == .denied }.count
            let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
            let diagnostics = Collector<ConsentDiagnostic>()
            let after = launchGateAndConsent(on: data, policy: Self.policy) { diagnostics.append($0) }
            if !(await Self.holds(kind, after.privacy, after.consent)) {
                failures.append("\(kind) crashed after \(steps) steps: the no is not in force after the fold")
            }
            if denials != (kind == .disable ? 0 : 1) {
                failures.append("\(kind) crashed after \(steps) steps: \(denials) denial records")
            }
            if kind != .disable && !stored.deniedConsentCategories.contains(.analytics) {
                failures.append("\(kind) crashed after \(steps) steps: the gate state lacks the ledger's refusal")
            }
            if !diagnostics.all.isEmpty {
                failures.append("\(kind) crashed after \(steps) steps: \(diagnostics.all)")
            }
            if FileManager.default.fileExists(
                atPath: data.url.appending(path: IntentJournal.directoryName).path(percentEncoded: false))
            {
                failures.append("\(kind) crashed after \(steps) steps: intents left after a full fold")
            }
            if taken < steps { break }  // The fold finished within the budget: every crash point was explored.
        }
        #expect(explored >= 3, "\(kind): only \(explored) crash points")
        #expect(failures.isEmpty, "\(failures)")
        print("IntentCrashEnumerationTests: \(kind): \(explored) crash points explored")
    }

    /// A revoke-all folded from its intent marks what it turned off as the user's refusal, as its locked write does,
    /// so a later launch with `resetEnabledFeatures` keeps every flag off; a plain disable marks nothing.
    @Test func revokeAllFoldedFromItsIntentIsKeptByAReset() {
        let before = FeatureStateRecord(enabledFeatures: [.push, .analytics], decidedFeatures: [.push, .analytics])
        let revoked = Self.intent(.revoke).applied(to: before)
        #expect(revoked.enabledFeatures.isEmpty)
        #expect(revoked.revokedFeatures == FeatureCatalog.builtIn.allFeatures)
        #expect(Self.intent(.disable).applied(to: before).revokedFeatures.isEmpty)
    }
}
