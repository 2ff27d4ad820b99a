import FeatureGate
import FeatureGateIAB
import Foundation
import Testing

/// Keys a test changes while a source reads them, as a CMP writes UserDefaults.
final class MutableCMPKeys: CMPKeyValueSource {
    private let values: LockedValue<[String: CMPValue]>

    init(_ values: [String: CMPValue] = [:]) {
        self.values = LockedValue(values)
    }

    func set(_ values: [String: CMPValue]) { self.values.withLock { $0 = values } }

    func cmpValue(forKey key: String) -> CMPValue? { values.withLock { $0[key] } }
}

/// A ledger whose appends fail while `failing` is set.
final class FlakyLedger: ConsentLedger {
    let inner = InMemoryConsentLedger()
    let failing = LockedValue(false)

    struct Refused: Error {}

    func load() throws -> ConsentLedgerContents { try inner.load() }
    func append(_ record: ConsentRecord) throws {
        if failing.withLock({ $0 }) { throw Refused() }
        try inner.append(record)
    }
    func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
}

/// Applying a CMP's answer to a ConsentManager: only changes, recorded with the `cmp` source, never twice.
@Suite struct CMPConsentSourceTests {
    static let analyticsOnly: [String: CMPValue] = [
        CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string("1000000100"),
    ]
    static let everything: [String: CMPValue] = [
        CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string("1011001100"),
    ]

    private func setUp(
        _ keys: [String: CMPValue], ledger: any ConsentLedger = InMemoryConsentLedger()
    ) -> (PrivacyManager, ConsentManager, MutableCMPKeys, CMPConsentSource) {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        let source = MutableCMPKeys(keys)
        return (privacy, consent, source, CMPConsentSource(consentManager: consent, keys: source))
    }

    @Test func theFirstRefreshAppliesTheCMPsAnswerWithTheCMPSource() async throws {
        let (privacy, consent, _, source) = setUp(Self.analyticsOnly)
        let refresh = await source.refresh()
        #expect(refresh.records.map(\.category) == [.advertising, .analytics])
        #expect(refresh.records.allSatisfy { $0.source == .cmp })
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(await consent.status(for: .advertising) == .denied)
        #expect(privacy.isEnabled(.analytics))
        #expect(!privacy.isEnabled(.contacts))
    }

    @Test func repeatedRefreshesRecordNothingMore() async throws {
        let (_, consent, _, source) = setUp(Self.analyticsOnly)
        await source.refresh()
        let after = try await consent.records()
        for _ in 0..<200 {
            let refresh = await source.refresh()
            #expect(refresh.records.isEmpty)
        }
        #expect(try await consent.records() == after)
    }

    @Test func concurrentRefreshesRecordEachChangeOnce() async throws {
        let (_, consent, keys, source) = setUp(Self.analyticsOnly)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2000 {
                group.addTask {
                    if index == 1000 { keys.set(Self.everything) }
                    await source.refresh()
                }
            }
        }
        await source.refresh()
        let records = try await consent.records()
        // Each category's trail alternates: never the same status recorded twice in a row.
        for category in [ConsentCategory.analytics, .advertising] {
            let trail = records.filter { $0.category == category }.map(\.newStatus)
            #expect(zip(trail, trail.dropFirst()).allSatisfy { $0 != $1 }, "\(category): \(trail)")
        }
        #expect(records.count <= 4)
        #expect(await consent.status(for: .advertising) == .granted)
    }

    @Test func onlyCategoriesWhoseAnswerChangedAreApplied() async throws {
        let (_, _, keys, source) = setUp(Self.analyticsOnly)
        await source.refresh()
        keys.set(Self.everything)
        let refresh = await source.refresh()
        #expect(refresh.records.map(\.category) == [.advertising])
        #expect(refresh.records.first?.previousStatus == .denied)
        #expect(refresh.records.first?.newStatus == .granted)
    }

    @Test func anUnchangedAnswerDoesNotUndoTheUsersChoiceInTheApp() async throws {
        let (privacy, consent, _, source) = setUp(Self.analyticsOnly)
        await source.refresh()
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        let refresh = await source.refresh()
        #expect(refresh.records.isEmpty)
        #expect(await consent.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
    }

    @Test func whenTheCMPStopsSpeakingStatusesStay() async throws {
        let (_, consent, keys, source) = setUp(Self.analyticsOnly)
        await source.refresh()
        keys.set([CMPKey.gdprApplies: .number(0)])
        #expect(await source.refresh().records.isEmpty)
        #expect(await consent.status(for: .analytics) == .granted)
        // Speaking again with the answer it gave last is no change of the CMP's answer.
        keys.set(Self.analyticsOnly)
        #expect(await source.refresh().records.isEmpty)
    }

    /// Issue 17 part 4: a malformed string is no answer. It changes and records nothing, and the same grant read
    /// again afterwards does not undo the denial the user made in the app in between.
    @Test func aMalformedStringIsNoAnswerAndTheSameGrantAfterItUndoesNoDenial() async throws {
        let (privacy, consent, keys, source) = setUp(Self.analyticsOnly)
        await source.refresh()
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        keys.set(Self.analyticsOnly.merging([CMPKey.tcString: .string("garbage")]) { $1 })
        let refresh = await source.refresh()
        #expect(refresh.consent.hasErrors)
        #expect(refresh.records.isEmpty)
        #expect(await consent.status(for: .analytics) == .denied)
        keys.set(Self.analyticsOnly)
        #expect(await source.refresh().records.isEmpty)
        #expect(await consent.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
    }

    @Test func aGrantTheLedgerRefusesIsRetriedOnTheNextRefresh() async throws {
        let ledger = FlakyLedger()
        ledger.failing.withLock { $0 = true }
        let (_, consent, _, source) = setUp(Self.analyticsOnly, ledger: ledger)
        let refused = await source.refresh()
        #expect(refused.recordingErrors.count == 2)
        #expect(await consent.status(for: .analytics) == .unknown)
        #expect(await consent.status(for: .advertising) == .denied)
        ledger.failing.withLock { $0 = false }
        let retried = await source.refresh()
        #expect(retried.records.map(\.category) == [.analytics])
        #expect(await consent.status(for: .analytics) == .granted)
    }

    /// A relaunch: a new gate and consent manager on the same store and ledger, and a new source.
    private func relaunch(
        ledger: any ConsentLedger, store: InMemoryFeatureStore, keys: MutableCMPKeys
    ) -> (PrivacyManager, ConsentManager, CMPConsentSource) {
        let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: store)
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        return (privacy, consent, CMPConsentSource(consentManager: consent, keys: keys))
    }

    @Test func anUnchangedAnswerDoesNotUndoTheUsersChoiceAfterARelaunch() async throws {
        let ledger = InMemoryConsentLedger()
        let store = InMemoryFeatureStore()
        let keys = MutableCMPKeys(Self.analyticsOnly)
        let (_, consent, source) = relaunch(ledger: ledger, store: store, keys: keys)
        await source.refresh()
        try await consent.setStatus(.denied, for: .analytics, source: .user)

        let (privacy, relaunched, newSource) = relaunch(ledger: ledger, store: store, keys: keys)
        let refresh = await newSource.refresh()
        #expect(refresh.records.isEmpty, "re-applied after the relaunch: \(refresh.records)")
        #expect(await relaunched.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
    }

    /// The CMP's first answer matched what the user had chosen in the app: it is recorded anyway, so after the
    /// user changes their mind and the app relaunches, the CMP's unchanged answer is still no decision.
    @Test func anAnswerThatMatchedTheStatusIsRecordedAndHoldsAcrossARelaunch() async throws {
        let ledger = InMemoryConsentLedger()
        let store = InMemoryFeatureStore()
        let keys = MutableCMPKeys(Self.analyticsOnly)
        let (_, consent, source) = relaunch(ledger: ledger, store: store, keys: keys)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        let first = await source.refresh()
        let confirmation = try #require(first.records.first { $0.category == .analytics })
        #expect(confirmation.previousStatus == .granted && confirmation.newStatus == .granted)
        #expect(confirmation.source == .cmp)
        try await consent.setStatus(.denied, for: .analytics, source: .user)

        let (privacy, relaunched, newSource) = relaunch(ledger: ledger, store: store, keys: keys)
        #expect(await newSource.refresh().records.isEmpty)
        #expect(await relaunched.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
    }

    @Test func aSignalThatBecomesUnreadableNeverLiftsADenial() async throws {
        let (_, consent, keys, source) = setUp([CMPKey.usPrivacyString: .string("1YYN")])
        await source.refresh()
        #expect(await consent.status(for: .thirdPartySharing) == .denied)
        keys.set([CMPKey.usPrivacyString: .string("garbage")])
        let refresh = await source.refresh()
        #expect(refresh.consent.decisions[.thirdPartySharing] == .unknown)
        #expect(refresh.records.isEmpty)
        #expect(await consent.status(for: .thirdPartySharing) == .denied)
    }

    @Test func gppsGlobalPrivacyControlIsTheGPCSourceAndDecidesOnlyWhenItChanges() async throws {
        let (privacy, consent) = gpcConsentManager()
        var keys: [String: CMPValue] = [
            CMPKey.gppString: .string("DBABLA~BAAAAAAAAQA.YA"), CMPKey.gppSectionIDs: .number(7),
        ]
        let refresh = await CMPConsentSource(consentManager: consent, keys: keys).refresh()
        #expect(refresh.consent.globalPrivacyControl == true)
        #expect(refresh.records.contains { $0.source == .gpc && $0.category == .thirdPartySharing })
        #expect(!privacy.isEnabled(.contacts))

        try await consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
        #expect(
            await CMPConsentSource(consentManager: consent, keys: keys).refresh().records.filter {
                $0.source == .gpc
            }.isEmpty)
        #expect(privacy.isEnabled(.contacts))

        keys[CMPKey.gppString] = .string("DBABLA~BAAAAAAAAQA.QA")
        #expect(
            await CMPConsentSource(consentManager: consent, keys: keys).refresh().consent.globalPrivacyControl == false)
        #expect(await consent.context.isGlobalPrivacyControlOn == false)
    }
}
