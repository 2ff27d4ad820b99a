import FeatureGate
import Foundation
import Observation
import Testing

// ConsentSettings is @Observable: iOS 17 / macOS 14 and later (ConsentSettingsSnapshotTests cover the floor).
@MainActor
@Suite struct ConsentSettingsTests {
    /// Waits, yielding, until `condition` holds; false if it never does within many turns of the main actor.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<10_000 {
            if condition() { return true }
            await Task.yield()
        }
        return condition()
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func entriesStartFromTheStatusesAndTheAuditTrail() async throws {
        let ledger = InMemoryConsentLedger()
        try ledger.append(record(.analytics, .unknown, .granted, source: .migration))
        let consent = ConsentManager(privacy: manager([]), ledger: ledger)
        let settings = await ConsentSettings(consent: consent)
        #expect(settings.entries.map(\.category) == [.advertising, .analytics, .thirdPartySharing])
        #expect(
            settings.entries[1]
                == ConsentSettings.Entry(
                    category: .analytics, status: .granted, decidedAt: fixedTime, decidedBy: .migration))
        #expect(
            settings.entries[0]
                == ConsentSettings.Entry(
                    category: .advertising, status: .unknown, decidedAt: nil, decidedBy: nil))
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func aChangeFromAnotherSourceUpdatesTheModelAndItsObservers() async throws {
        let authorizer = ScriptedTrackingAuthorizer(status: .denied)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger(), now: { fixedTime })
        let settings = await ConsentSettings(consent: consent)
        let observed = LockedValue(0)
        withObservationTracking {
            _ = settings.entries
        } onChange: {
            observed.withLock { $0 += 1 }
        }

        try await TrackingConsent(authorizer: authorizer, consent: consent).synchronize()
        #expect(await eventually { settings.status(for: .advertising) == .denied })
        #expect(observed.withLock { $0 } == 1)
        #expect(settings.entries.first { $0.category == .advertising }?.decidedBy == .att)

        // A revocation from elsewhere (a server, a consent platform) shows too, category by category.
        try await consent.denyAll(source: .remote)
        #expect(await eventually { settings.entries.allSatisfy { $0.status == .denied } })
        #expect(
            settings.entries.filter { $0.decidedBy == .remote }.map(\.category) == [.analytics, .thirdPartySharing])
    }

    /// A toggle bound to the model must not flip back: the setter's own change is shown when it returns, rows and
    /// details alike, without waiting for it to come round through observation.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func aSetterShowsItsOwnChangeWhenItReturns() async throws {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger(), now: { fixedTime })
        let settings = await ConsentSettings(consent: consent)

        await settings.set(.denied, for: .advertising)
        #expect(settings.status(for: .advertising) == .denied)
        #expect(settings.detail(for: .advertising)?.decision.status == .denied)
        #expect(settings.entries.first { $0.category == .advertising }?.decidedBy == .user)

        await settings.set(.granted, for: .analytics)
        #expect(settings.status(for: .analytics) == .granted)
        #expect(settings.detail(for: .analytics)?.features.allSatisfy(\.isEnabled) == true)

        await settings.denyAll()
        #expect(settings.entries.allSatisfy { $0.status == .denied })
        #expect(settings.details.allSatisfy { $0.decision.status == .denied })
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func settersGoThroughTheConsentManagerAsTheUser() async throws {
        let ledger = InMemoryConsentLedger()
        let privacy = manager([])
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        let settings = await ConsentSettings(consent: consent)
        await settings.set(.granted, for: .analytics)
        #expect(privacy.isEnabled(.analytics))
        #expect(try ledger.load().records.map(\.source) == [.user])
        #expect(await eventually { settings.status(for: .analytics) == .granted })
        await settings.denyAll()
        #expect(await eventually { settings.entries.allSatisfy { $0.status == .denied } })
        #expect(settings.lastError == nil)
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func aGrantTheLedgerRefusesIsNotShownAndIsReported() async {
        let consent = ConsentManager(privacy: manager([]), ledger: FailingLedger())
        let settings = await ConsentSettings(consent: consent)
        await settings.set(.granted, for: .analytics)
        #expect(settings.lastError?.applied == false)
        #expect(settings.status(for: .analytics) == .unknown)
        // A denial is applied although the ledger refuses it, and shows.
        await settings.set(.denied, for: .analytics)
        #expect(settings.lastError?.applied == true)
        #expect(await eventually { settings.status(for: .analytics) == .denied })
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func thousandsOfChangesFromManyTasksEndInTheManagersState() async throws {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let settings = await ConsentSettings(consent: consent)
        let statuses: [ConsentStatus] = [.granted, .denied, .unknown, .restricted]
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<250 {
                        let category = [ConsentCategory.analytics, .advertising, .thirdPartySharing][(task + index) % 3]
                        _ = try? await consent.setStatus(
                            statuses[(task * 7 + index) % 4], for: category, source: .remote)
                    }
                }
            }
        }
        let final = await consent.allStatuses
        #expect(await eventually { settings.entries.allSatisfy { final[$0.category] == $0.status } })
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func theDashboardShowsExpiryBlockersAndTheFeaturesOfEachCategory() async throws {
        let clock = LockedValue(ConsentModel.start)
        let policy = ConsentModel.policy(version: 1)
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all), store: InMemoryFeatureStore(),
            consentPolicy: policy)
        let consent = ConsentManager(
            privacy: privacy, ledger: InMemoryConsentLedger(), region: ConsentRegion("US"),
            now: { clock.withLock { $0 } })
        let settings = await ConsentSettings(consent: consent)
        await settings.set(.granted, for: .analytics)
        #expect(
            await eventually { settings.detail(for: .analytics)?.decision.source == .user })
        let analytics = try #require(settings.detail(for: .analytics))
        #expect(analytics.decision.expiresAt == ConsentModel.start.addingTimeInterval(395 * 86_400))
        #expect(analytics.features.map(\.feature) == [.analytics, .tagsAndAttributes])
        #expect(analytics.features.allSatisfy { $0.isEnabled })

        await consent.setChild(true)
        await settings.reload()
        #expect(settings.detail(for: .advertising)?.decision.blocker == .child)

        clock.withLock { $0 = $0.addingTimeInterval(400 * 86_400) }
        await settings.reload()
        #expect(await eventually { settings.status(for: .analytics) == .expired })
        let expired = try #require(settings.detail(for: .analytics))
        #expect(expired.decision.askReason == .grantExpired)
        #expect(expired.decision.isPermitted)  // opt-out in the US
    }
}
