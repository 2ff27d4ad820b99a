import FeatureGate
import Foundation
import Testing

struct FailingLedger: ConsentLedger {
    struct Failure: Error {}
    func load() throws -> ConsentLedgerContents { ConsentLedgerContents(records: []) }
    func append(_ record: ConsentRecord) throws { throw Failure() }
    func exportJSONLines() throws -> Data { Data() }
}

@Suite struct ConsentManagerTests {
    @Test func everyCategoryStartsUnknownAndNeedsAPrompt() async {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        #expect(await consent.status(for: .analytics) == .unknown)
        #expect(await consent.categoriesNeedingPrompt == [.advertising, .analytics, .thirdPartySharing])
        #expect(
            await consent.allStatuses == [.analytics: .unknown, .advertising: .unknown, .thirdPartySharing: .unknown])
    }

    @Test func grantingEnablesTheMappedFeaturesAndAnyOtherStatusDisablesThem() async throws {
        let privacy = manager(.push)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(privacy.enabledFeatures == [.push, .analytics, .tagsAndAttributes])
        for status in [ConsentStatus.denied, .restricted, .unknown] {
            try await consent.setStatus(.granted, for: .analytics, source: .user)
            try await consent.setStatus(status, for: .analytics, source: .user)
            #expect(privacy.enabledFeatures == .push, "status \(status)")
        }
    }

    @Test func unknownIsDistinctFromDenied() async throws {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(await !consent.needsPrompt(for: .analytics))
        #expect(await consent.needsPrompt(for: .advertising))
        #expect(await consent.status(for: .analytics) == .denied)
    }

    @Test func settingTheSameStatusRecordsNothing() async throws {
        let ledger = InMemoryConsentLedger()
        let consent = ConsentManager(privacy: manager([]), ledger: ledger)
        #expect(try await consent.setStatus(.granted, for: .analytics, source: .user) != nil)
        #expect(try await consent.setStatus(.granted, for: .analytics, source: .user) == nil)
        #expect(try ledger.load().records.count == 1)
    }

    @Test func observersSeeEachAppliedChangeInOrderUntilCancelled() async throws {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger(), now: { fixedTime })
        let changes = Collector<ConsentChange>()
        let token = consent.observe { changes.append($0) }
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        try await consent.setStatus(.granted, for: .analytics, source: .user)  // no change
        try await consent.setStatus(.denied, for: .advertising, source: .att)
        token.cancel()
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(
            changes.all == [
                ConsentChange(
                    category: .analytics, previous: .unknown, current: .granted, source: .user, time: fixedTime,
                    isRecorded: true),
                ConsentChange(
                    category: .advertising, previous: .unknown, current: .denied, source: .att, time: fixedTime,
                    isRecorded: true),
            ])
    }

    @Test func aDenialTheLedgerRefusedIsObservedAsUnrecorded() async {
        let consent = ConsentManager(privacy: manager([]), ledger: FailingLedger(), now: { fixedTime })
        let changes = Collector<ConsentChange>()
        let token = consent.observe { changes.append($0) }
        _ = try? await consent.setStatus(.granted, for: .analytics, source: .user)  // refused, not applied
        _ = try? await consent.setStatus(.denied, for: .analytics, source: .user)  // refused, applied
        withExtendedLifetime(token) {}
        #expect(changes.all.map(\.current) == [.denied])
        #expect(changes.all.map(\.isRecorded) == [false])
    }

    @Test func everyChangeIsRecordedWithItsContext() async throws {
        let ledger = InMemoryConsentLedger()
        let consent = ConsentManager(privacy: manager([]), ledger: ledger, now: { fixedTime })
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        try await consent.setStatus(.denied, for: .analytics, source: .remote)
        try await consent.setStatus(.granted, for: ConsentCategory("personalization"), source: .appDefault)
        #expect(
            try ledger.load().records == [
                record(.analytics, .unknown, .granted),
                record(.analytics, .granted, .denied, source: .remote),
                record(ConsentCategory("personalization"), .unknown, .granted, source: .appDefault),
            ])
    }

    @Test func aFeatureMappedByTwoCategoriesNeedsBothGranted() async throws {
        let policy = ConsentPolicy(
            version: 1, features: [.analytics: .analytics, .thirdPartySharing: [.analytics, .contacts]])
        let privacy = manager([])
        let consent = ConsentManager(privacy: privacy, policy: policy, ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(privacy.enabledFeatures == [])
        try await consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
        #expect(privacy.enabledFeatures == [.analytics, .contacts])
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(privacy.enabledFeatures == .contacts)
    }

    @Test func statusesAreRestoredFromTheLedgerAsPermissionsWithoutDecidingAnything() async throws {
        let ledger = InMemoryConsentLedger()
        try ledger.append(record(.analytics, .unknown, .granted))
        try ledger.append(record(.thirdPartySharing, .unknown, .denied))
        // The gate state the grant left: analytics and tags decided on. Contacts is on in the configuration.
        let store = RecordingFeatureStore(
            record: FeatureStateRecord(
                enabledFeatures: [.analytics, .tagsAndAttributes], decidedFeatures: [.analytics, .tagsAndAttributes]
            ).encoded())
        let privacy = manager(.contacts, store: store)
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(await consent.status(for: .thirdPartySharing) == .denied)
        #expect(privacy.enabledFeatures == [.analytics, .tagsAndAttributes])
        #expect(privacy.reason(for: .contacts).withholdingConsent == [.thirdPartySharing: .denied])
        #expect(privacy.reason(for: .contacts).isLocallyEnabled)
        #expect(consent.startupDiagnostics.isEmpty)
        #expect(store.calls.saves == 0)
    }

    @Test func aGrantInTheLedgerAloneDoesNotTurnOnWhatNobodyDecidedOn() async throws {
        let ledger = InMemoryConsentLedger()
        try ledger.append(record(.analytics, .unknown, .granted))
        let privacy = manager([])
        _ = ConsentManager(privacy: privacy, ledger: ledger)
        #expect(privacy.enabledFeatures == [])
        #expect(privacy.reason(for: .analytics).isPermitted)
        #expect(privacy.reason(for: .analytics).blockingLayers == [.local])
    }

    @Test func aPolicyVersionBumpMakesEarlierGrantsStaleButKeepsDenialsAndHistory() async throws {
        let ledger = InMemoryConsentLedger()
        try ledger.append(record(.analytics, .unknown, .granted, version: 1))
        try ledger.append(record(.thirdPartySharing, .unknown, .denied, version: 1))
        let privacy = manager([], store: RecordingFeatureStore(stored: [.analytics, .tagsAndAttributes, .push]))
        let v2 = ConsentPolicy(version: 2, features: ConsentPolicy.default.features)
        let consent = ConsentManager(privacy: privacy, policy: v2, ledger: ledger)
        #expect(await consent.status(for: .analytics) == .unknown)
        #expect(await consent.needsPrompt(for: .analytics))
        #expect(await consent.staleCategories == [.analytics])
        #expect(await consent.status(for: .thirdPartySharing) == .denied)
        #expect(privacy.enabledFeatures == .push)
        #expect(try ledger.load().records.count == 2)

        try await consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(await consent.staleCategories == [])
        #expect(
            try ledger.load().records.last
                == record(.analytics, .unknown, .granted, version: 2).with(time: ledger.load().records.last!.time))
    }

    @Test func unreadableLedgerEntriesMakeGrantsUnknown() async throws {
        var lines = Data()
        let good = InMemoryConsentLedger()
        try good.append(record(.analytics, .unknown, .granted))
        lines.append(try good.exportJSONLines())
        lines.append(Data("{not json}\n".utf8))
        let privacy = manager([])
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger(jsonLines: lines))
        #expect(await consent.status(for: .analytics) == .unknown)
        #expect(privacy.enabledFeatures == [])
        #expect(
            consent.startupDiagnostics.map(\.description) == [
                "in-memory consent ledger: 1 consent ledger entry cannot be decoded; grants read as unknown until asked again"
            ])
    }

    @Test func aGrantThatCannotBeRecordedIsNotAppliedButADenialIs() async throws {
        let privacy = manager([.analytics, .tagsAndAttributes])
        let consent = ConsentManager(privacy: privacy, ledger: FailingLedger())
        // Start-up applied "unknown": the consent-managed features went off.
        #expect(privacy.enabledFeatures == [])
        await #expect(throws: ConsentRecordingError.self) {
            try await consent.setStatus(.granted, for: .analytics, source: .user)
        }
        #expect(privacy.enabledFeatures == [])
        #expect(await consent.status(for: .analytics) == .unknown)
        do {
            try await consent.setStatus(.denied, for: .analytics, source: .user)
            Issue.record("expected a recording error")
        } catch {
            #expect(error.applied)
        }
        #expect(await consent.status(for: .analytics) == .denied)
    }

    @Test func denyAllDeniesEveryCategoryOnce() async throws {
        let ledger = InMemoryConsentLedger()
        let privacy = manager([])
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        try await consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
        try await consent.setStatus(.denied, for: .advertising, source: .user)
        let records = try await consent.denyAll(source: .user)
        #expect(records.map(\.category) == [.analytics, .thirdPartySharing])
        #expect(privacy.enabledFeatures == [])
        #expect(await consent.allStatuses.values.allSatisfy { $0 == .denied })
    }

    @Test func startingWithAnEmptyLedgerAndEverythingOffWritesNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let files = PrivacyDataDirectory(url: directory.url)
        let privacy = manager([], store: FileFeatureStore(url: files.stateFile))
        let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile))
        _ = AnonymousIdentifier(privacy: privacy, url: files.anonymousIdentifierFile)
        #expect(await consent.needsPrompt(for: .analytics))
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // Setting the status a category already has writes nothing.
        #expect(try await consent.setStatus(.unknown, for: .analytics, source: .user) == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // A denial of features that are already off changes no feature, but it is the person's decision: the ledger
        // records it, and so does the gate state, so that it holds after a relaunch whichever write fails.
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                PrivacyDataDirectory.lockFileName, PrivacyDataDirectory.consentLedgerFileName,
                PrivacyDataDirectory.consentLedgerCheckpointFileName, PrivacyDataDirectory.stateFileName,
            ])
    }

    @Test func concurrentConsentChangesEndConsistent() async throws {
        let privacy = manager([])
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        await withTaskGroup(of: Void.self) { group in
            for category in [ConsentCategory.analytics, .thirdPartySharing] {
                group.addTask {
                    for index in 0..<1_000 {
                        _ = try? await consent.setStatus(
                            index.isMultiple(of: 2) ? .granted : .denied, for: category, source: .user)
                    }
                    _ = try? await consent.setStatus(.granted, for: category, source: .user)
                }
            }
        }
        #expect(privacy.enabledFeatures == [.analytics, .tagsAndAttributes, .contacts])
        #expect(try await consent.records().count == 2 * 1_001)
    }
}
