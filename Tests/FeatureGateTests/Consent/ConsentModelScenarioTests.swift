import FeatureGate
import Foundation
import Testing

/// The five ways consent and the gate used to disagree, each turning a "no" back into a "yes" (issue 10).
@Suite struct ConsentModelScenarioTests {
    /// One launch of an app: a gate over `store`, consent over `ledger`, ATT from `authorizer`.
    struct Launch {
        let privacy: PrivacyManager
        let consent: ConsentManager
        let tracking: TrackingConsent

        init(
            _ configuration: Feature = [],
            store: FaultyFeatureStore,
            ledger: FaultyConsentLedger = FaultyConsentLedger(),
            authorizer: ScriptedTrackingAuthorizer = ScriptedTrackingAuthorizer()
        ) {
            privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: configuration), store: store)
            consent = ConsentManager(privacy: privacy, ledger: ledger)
            tracking = TrackingConsent(authorizer: authorizer, consent: consent)
        }
    }

    @Test func aDenialTheLedgerCouldNotRecordStillHoldsAfterARelaunch() async throws {
        let store = FaultyFeatureStore()
        let ledger = FaultyConsentLedger()
        let first = Launch(store: store, ledger: ledger)
        try await first.consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(first.privacy.isEnabled(.analytics))

        ledger.failNextAppend()  // disk full
        await #expect(throws: ConsentRecordingError.self) {
            try await first.consent.setStatus(.denied, for: .analytics, source: .user)
        }
        #expect(!first.privacy.isEnabled(.analytics))

        // The ledger's last word is still "granted"; the gate state kept the refusal.
        let second = Launch(store: store, ledger: ledger)
        #expect(!second.privacy.isEnabled(.analytics))
        #expect(!second.privacy.isEnabled(.tagsAndAttributes))
        #expect(await second.consent.status(for: .analytics) == .denied)
        #expect(second.consent.startupDiagnostics.map(\.description).contains { $0.contains("refusal of analytics") })
    }

    @Test func anInAppNoOutlivesAnUnchangedTrackingAuthorization() async throws {
        let identifier = UUID()
        let authorizer = ScriptedTrackingAuthorizer(status: .authorized, advertisingIdentifier: identifier)
        let store = FaultyFeatureStore()
        let ledger = FaultyConsentLedger()
        let launch = Launch(store: store, ledger: ledger, authorizer: authorizer)
        try await launch.tracking.synchronize()
        #expect(await launch.tracking.advertisingIdentifier == identifier)

        try await launch.consent.denyAll(source: .user)
        #expect(await launch.tracking.advertisingIdentifier == nil)
        // Every foreground, ATT unchanged: no decision, no record.
        #expect(try await launch.tracking.synchronize() == nil)
        #expect(await launch.consent.status(for: .advertising) == .denied)
        #expect(await launch.tracking.advertisingIdentifier == nil)

        // Nor after a relaunch.
        let relaunch = Launch(store: store, ledger: ledger, authorizer: authorizer)
        #expect(try await relaunch.tracking.synchronize() == nil)
        #expect(await relaunch.tracking.advertisingIdentifier == nil)
        #expect(try await relaunch.consent.records().filter { $0.source == .att }.map(\.newStatus) == [.granted])

        // A real change of ATT status is still a decision.
        authorizer.status = .denied
        try await relaunch.tracking.synchronize()
        authorizer.status = .authorized
        #expect(try await relaunch.tracking.synchronize()?.newStatus == .granted)
        #expect(await relaunch.tracking.advertisingIdentifier == identifier)
    }

    /// Scenario 2 when the app's own screen came first: advertising was already granted when ATT said authorized,
    /// so ATT's answer changed nothing, but it is recorded all the same. Before, it was kept in memory only, and
    /// after an in-app "no" and a relaunch the unchanged ATT status granted advertising again.
    @Test func anInAppNoOutlivesARelaunchWhenATTOnlyConfirmedAnEarlierGrant() async throws {
        let authorizer = ScriptedTrackingAuthorizer(status: .authorized, advertisingIdentifier: UUID())
        let store = FaultyFeatureStore()
        let ledger = FaultyConsentLedger()
        let launch = Launch(store: store, ledger: ledger, authorizer: authorizer)
        try await launch.consent.setStatus(.granted, for: .advertising, source: .user)
        let confirmation = try await launch.tracking.synchronize()
        #expect(confirmation?.previousStatus == .granted && confirmation?.newStatus == .granted)
        try await launch.consent.setStatus(.denied, for: .advertising, source: .user)

        let relaunch = Launch(store: store, ledger: ledger, authorizer: authorizer)
        #expect(try await relaunch.tracking.synchronize() == nil)
        #expect(await relaunch.consent.status(for: .advertising) == .denied)
        #expect(await relaunch.tracking.advertisingIdentifier == nil)
    }

    @Test func oneCategorysGrantNeverReenablesAnotherCategorysFeatures() async throws {
        let store = FaultyFeatureStore()
        let ledger = FaultyConsentLedger()
        let launch = Launch(store: store, ledger: ledger)
        try await launch.consent.setStatus(.granted, for: .analytics, source: .user)
        launch.privacy.disableFeatures(.analytics)
        try await launch.consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
        #expect(launch.privacy.enabledFeatures == [.tagsAndAttributes, .contacts])
        #expect(launch.privacy.reason(for: .analytics).source == .app)

        let relaunch = Launch(store: store, ledger: ledger)
        #expect(relaunch.privacy.enabledFeatures == [.tagsAndAttributes, .contacts])
    }

    @Test func theKillSwitchNeverErasesAHiddenChoice() {
        let gate = manager([.analytics, .push])
        gate.remoteDisabledFeatures = .push
        gate.enabledFeatures.insert(.contacts)
        gate.remoteDisabledFeatures = []
        #expect(gate.enabledFeatures == [.analytics, .push, .contacts])
    }

    @Test func anAppUpdateChangesTheDefaultOfEveryFlagNobodyDecided() {
        let store = FaultyFeatureStore()
        let firstRelease = manager([.push, .contacts], store: store)
        firstRelease.disableFeatures(.contacts)  // decided off
        firstRelease.enableFeatures(.messageCenter)  // decided on
        firstRelease.disableFeatures(.featureFlags)  // already off: no decision
        #expect(firstRelease.enabledFeatures == [.push, .messageCenter])

        // The next release turns analytics, contacts and feature flags on by default, and push off.
        let nextRelease = manager([.analytics, .contacts, .featureFlags], store: store)
        #expect(nextRelease.enabledFeatures == [.analytics, .messageCenter, .featureFlags])
        #expect(nextRelease.reason(for: .analytics).source == .configuration)
        #expect(nextRelease.reason(for: .contacts).source == .storedState)
    }

    @Test func aVersionOneRecordReadsAsEveryFlagDecided() {
        let store = RecordingFeatureStore(record: Data(#"{"version":1,"enabledFeatures":4}"#.utf8))
        let gate = manager(.all, store: store)
        #expect(gate.enabledFeatures == .push)
        #expect(gate.reasons().allSatisfy { $0.source == .storedState })
        #expect(store.calls.saves == 0)
    }
}
