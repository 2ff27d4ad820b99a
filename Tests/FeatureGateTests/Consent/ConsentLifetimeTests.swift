import FeatureGate
import Foundation
import Testing

/// Issue 19's rules one scenario at a time: lifetimes, clock changes, regions, the child mark, GPC.
@Suite struct ConsentLifetimeTests {
    /// One launch over `store` and `ledger`, with the model's policy and a clock the test moves.
    struct Launch {
        let privacy: PrivacyManager
        let consent: ConsentManager

        init(
            _ configuration: Feature = .all, store: FaultyFeatureStore, ledger: FaultyConsentLedger,
            clock: LockedValue<Date>, region: String? = nil, isChild: Bool = false
        ) {
            let policy = ConsentModel.policy(version: 1)
            privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: configuration), store: store,
                consentPolicy: policy)
            consent = ConsentManager(
                privacy: privacy, ledger: ledger, region: region.flatMap(ConsentRegion.init), isChild: isChild,
                now: { clock.withLock { $0 } })
        }
    }

    let store = FaultyFeatureStore()
    let ledger = FaultyConsentLedger()
    let clock = LockedValue(ConsentModel.start)

    func advance(days: Double) { clock.withLock { $0 = $0.addingTimeInterval(days * 86_400) } }

    @Test func aGrantExpiresAtTheExactInstantOfItsLastDayAndIsRecorded() async throws {
        let launch = Launch(store: store, ledger: ledger, clock: clock)
        try await launch.consent.setStatus(.granted, for: .analytics, source: .user)
        let decision = await launch.consent.decision(for: .analytics)
        #expect(decision.expiresAt == ConsentModel.start.addingTimeInterval(395 * 86_400))
        #expect(await launch.consent.nextExpiry == decision.expiresAt)

        advance(days: 395)
        clock.withLock { $0 = $0.addingTimeInterval(-0.001) }
        #expect(await launch.consent.refresh() == [])
        #expect(launch.privacy.isEnabled(.analytics))

        clock.withLock { $0 = $0.addingTimeInterval(0.001) }
        let records = await launch.consent.refresh()
        #expect(records.map(\.newStatus) == [.expired])
        #expect(records.first?.previousStatus == .granted)
        #expect(!launch.privacy.isEnabled(.analytics))
        let expired = await launch.consent.decision(for: .analytics)
        #expect(expired.status == .expired && expired.askReason == .grantExpired && expired.blocker == .region)
        #expect(await launch.consent.categoriesNeedingPrompt.contains(.analytics))
        // Noticed once: a later refresh records nothing more.
        #expect(await launch.consent.refresh() == [])
    }

    @Test func anExpiredGrantFollowsTheRegionButAnExpiredRefusalNeverPermits() async throws {
        let launch = Launch(store: store, ledger: ledger, clock: clock, region: "US-CA")
        try await launch.consent.setStatus(.granted, for: .analytics, source: .user)
        try await launch.consent.setStatus(.denied, for: .thirdPartySharing, source: .user)
        advance(days: 400)
        await launch.consent.refresh()
        let analytics = await launch.consent.decision(for: .analytics)
        let sharing = await launch.consent.decision(for: .thirdPartySharing)
        #expect(analytics.status == .expired && analytics.isPermitted)
        #expect(sharing.status == .expired && !sharing.isPermitted && sharing.askReason == .refusalExpired)
        #expect(!launch.privacy.isEnabled(.contacts))
    }

    @Test func aClockMovedBackwardsNeverStretchesAGrantButARefusalHolds() async throws {
        let first = Launch(store: store, ledger: ledger, clock: clock)
        try await first.consent.setStatus(.granted, for: .analytics, source: .user)
        try await first.consent.setStatus(.restricted, for: .thirdPartySharing, source: .user)
        advance(days: -2)
        let relaunch = Launch(store: store, ledger: ledger, clock: clock)
        #expect(await relaunch.consent.status(for: .analytics) == .expired)
        #expect(!relaunch.privacy.isEnabled(.analytics))
        #expect(await relaunch.consent.status(for: .thirdPartySharing) == .restricted)
        // Once noticed, the expiry stands when the clock comes back.
        advance(days: 2)
        #expect(await Launch(store: store, ledger: ledger, clock: clock).consent.status(for: .analytics) == .expired)
    }

    @Test func aLooserRegionWaitsForTheNextLaunchAndAStricterOneAppliesAtOnce() async {
        let launch = Launch([.contacts], store: store, ledger: ledger, clock: clock, region: "FR")
        #expect(!launch.privacy.isEnabled(.contacts))
        await launch.consent.setRegion(ConsentRegion("us"))
        #expect(await launch.consent.pendingRegion == ConsentRegion("US"))
        #expect(!launch.privacy.isEnabled(.contacts))

        let inTheUS = Launch([.contacts], store: store, ledger: ledger, clock: clock, region: "US")
        #expect(inTheUS.privacy.isEnabled(.contacts))
        await inTheUS.consent.setRegion(ConsentRegion("US-VA"))
        #expect(!inTheUS.privacy.isEnabled(.contacts))
    }

    @Test func aChildIsNeverPermittedAChildProhibitedCategoryAndTheReasonSaysSo() async throws {
        let launch = Launch(store: store, ledger: ledger, clock: clock, region: "US")
        try await launch.consent.setStatus(.granted, for: .advertising, source: .user)
        #expect(await launch.consent.decision(for: .advertising).isPermitted)
        await launch.consent.setChild(true)
        let decision = await launch.consent.decision(for: .advertising)
        #expect(decision.status == .granted && !decision.isPermitted && decision.blocker == .child)
        let sanitized = await launch.consent.sanitizer().sanitize(["advertising_id": .string("a")])
        #expect(sanitized.removedKeys == ["advertising_id"])
        await launch.consent.setChild(false)
        #expect(await launch.consent.decision(for: .advertising).isPermitted)
    }

    @Test func globalPrivacyControlRefusesOnceAndALaterGrantStands() async throws {
        let launch = Launch([.contacts], store: store, ledger: ledger, clock: clock, region: "US")
        #expect(launch.privacy.isEnabled(.contacts))
        let records = try await launch.consent.applyGlobalPrivacyControl(true)
        #expect(records.map(\.category) == [.advertising, .thirdPartySharing])
        #expect(records.allSatisfy { $0.source == .gpc && $0.newStatus == .denied })
        #expect(!launch.privacy.isEnabled(.contacts))
        #expect(launch.privacy.reason(for: .contacts).consentBlockers == [.thirdPartySharing: .globalPrivacyControl])

        try await launch.consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
        #expect(try await launch.consent.applyGlobalPrivacyControl(true) == [])
        let relaunch = Launch([.contacts], store: store, ledger: ledger, clock: clock, region: "US")
        #expect(try await relaunch.consent.applyGlobalPrivacyControl(true) == [])
        #expect(relaunch.privacy.isEnabled(.contacts))

        // Off, then on again (across a launch): a change, so it refuses again.
        try await relaunch.consent.applyGlobalPrivacyControl(false)
        #expect(relaunch.privacy.isEnabled(.contacts))
        let third = Launch([.contacts], store: store, ledger: ledger, clock: clock, region: "US")
        try await third.consent.applyGlobalPrivacyControl(true)
        #expect(!third.privacy.isEnabled(.contacts))
    }

    @Test func aLedgerWrittenBeforeLifetimesReadsAsItDid() async throws {
        let old = """
            {"category":"analytics","newStatus":"granted","policyVersion":1,"previousStatus":"unknown","source":"user","time":"2020-01-05T10:00:00.000Z","v":1}
            {"category":"advertising","newStatus":"denied","policyVersion":1,"previousStatus":"unknown","source":"att","time":"2020-01-05T10:00:00.000Z","v":1}

            """
        let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: .all), store: store)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger(jsonLines: Data(old.utf8)))
        #expect(consent.startupDiagnostics.isEmpty)
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(await consent.status(for: .advertising) == .denied)
        #expect(await consent.decision(for: .analytics).expiresAt == nil)
    }
}
