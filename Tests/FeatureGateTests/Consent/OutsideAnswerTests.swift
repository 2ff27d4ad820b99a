import FeatureGate
import Foundation
import Testing

/// Issue 17 part 4: an outside source's answer decides only when it differs from that source's last valid answer;
/// "unknown" is not an answer; the memory survives relaunches and failed ledger appends.
@Suite struct OutsideAnswerTests {
    /// A CMP whose keys are cleared for a moment, then come back with the same grant, does not undo the denial the
    /// user made in the app since, in this run or after a relaunch.
    @Test func aCMPThatFlapsThroughUnknownDoesNotUndoAnInAppDenial() async throws {
        let system = ConsentSystem()
        try await system.consent.applyAnswer(.granted, for: .analytics, source: .cmp)
        try await system.consent.setStatus(.denied, for: .analytics, source: .user)
        try await system.consent.applyAnswer(.unknown, for: .analytics, source: .cmp)
        try await system.consent.applyAnswer(.granted, for: .analytics, source: .cmp)
        #expect(await system.consent.status(for: .analytics) == .denied)
        system.relaunch(configuration: [], reset: false)
        try await system.consent.applyAnswer(.unknown, for: .analytics, source: .cmp)
        try await system.consent.applyAnswer(.granted, for: .analytics, source: .cmp)
        #expect(await system.consent.status(for: .analytics) == .denied)
        #expect(!system.privacy.isAnyEnabled([.analytics, .tagsAndAttributes]))
        // A real change still counts.
        try await system.consent.applyAnswer(.denied, for: .analytics, source: .cmp)
        try await system.consent.applyAnswer(.granted, for: .analytics, source: .cmp)
        #expect(await system.consent.status(for: .analytics) == .granted)
    }

    /// A malformed CMP answer (read as unknown) undecides nothing: the app's own "off" of a feature the CMP's
    /// grant had turned on stays off, and the grant stays.
    @Test func anUnknownAnswerDoesNotUndecideTheAppsOwnOff() async throws {
        let system = ConsentSystem()
        try await system.consent.applyAnswer(.granted, for: .analytics, source: .cmp)
        system.privacy.disableFeatures(.analytics)
        try await system.consent.applyAnswer(.unknown, for: .analytics, source: .cmp)
        #expect(await system.consent.status(for: .analytics) == .granted)
        #expect(system.privacy.reason(for: .analytics).source == .app)
        #expect(!system.privacy.isEnabled(.analytics))
        #expect(system.privacy.isEnabled(.tagsAndAttributes))
        #expect(try await system.consent.records().filter { $0.source == .cmp }.map(\.newStatus) == [.granted])
    }

    /// An unknown answer is not a first answer either: it records nothing.
    @Test func anUnknownAnswerRecordsNothing() async throws {
        let system = ConsentSystem()
        #expect(try await system.consent.applyAnswer(.unknown, for: .analytics, source: .cmp) == nil)
        try await system.consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(try await system.consent.applyAnswer(.unknown, for: .analytics, source: .att) == nil)
        #expect(try await system.consent.records().map(\.source) == [.user])
    }

    /// ATT authorized while the ledger refused the record; the user then denies in the app; after a relaunch ATT
    /// is still authorized: advertising stays denied.
    @Test func anATTAnswerTheLedgerRefusedDoesNotReGrantAfterARelaunch() async throws {
        let system = ConsentSystem()
        try await system.consent.setStatus(.granted, for: .advertising, source: .user)
        system.authorizer.status = .authorized
        system.ledger.failNextAppend()
        _ = try? await system.tracking.synchronize()
        try await system.consent.setStatus(.denied, for: .advertising, source: .user)
        system.relaunch(configuration: [], reset: false)
        try await system.tracking.synchronize()
        #expect(await system.consent.status(for: .advertising) == .denied)
    }

    /// The same when the denial's append failed too: only the gate state keeps the refusal, and the ATT answer is
    /// in neither; the unchanged ATT answer after the relaunch still does not re-grant.
    @Test func anATTAnswerDoesNotReGrantWhenTheDenialsAppendFailedToo() async throws {
        let system = ConsentSystem()
        try await system.consent.setStatus(.granted, for: .advertising, source: .user)
        system.authorizer.status = .authorized
        system.ledger.failNextAppend()
        _ = try? await system.tracking.synchronize()
        system.ledger.failNextAppend()
        _ = try? await system.consent.setStatus(.denied, for: .advertising, source: .user)
        system.relaunch(configuration: [], reset: false)
        try await system.tracking.synchronize()
        #expect(await system.consent.status(for: .advertising) == .denied)
        // And after the next relaunch, once something was recorded.
        try await system.consent.setStatus(.granted, for: .analytics, source: .user)
        system.relaunch(configuration: [], reset: false)
        try await system.tracking.synchronize()
        #expect(await system.consent.status(for: .advertising) == .denied)
        // ATT changing (denied in Settings, then authorized again) is still a decision.
        system.authorizer.status = .denied
        try await system.tracking.synchronize()
        system.authorizer.status = .authorized
        try await system.tracking.synchronize()
        #expect(await system.consent.status(for: .advertising) == .granted)
    }

    /// A CMP's denial the ledger refused is applied, remembered, and recorded before the next record that succeeds,
    /// so the audit trail keeps it and the next run remembers it.
    @Test func anAnswerTheLedgerRefusedIsRecordedBeforeTheNextRecord() async throws {
        let system = ConsentSystem()
        system.ledger.failNextAppend()
        _ = try? await system.consent.applyAnswer(.denied, for: .analytics, source: .cmp)
        #expect(await system.consent.status(for: .analytics) == .denied)
        try await system.consent.setStatus(.granted, for: .analytics, source: .user)
        let records = try await system.consent.records()
        #expect(records.map(\.source) == [.cmp, .user])
        #expect(records.map(\.newStatus) == [.denied, .granted])
        system.relaunch(configuration: [], reset: false)
        try await system.consent.applyAnswer(.denied, for: .analytics, source: .cmp)
        #expect(await system.consent.status(for: .analytics) == .granted)
    }

    /// Global Privacy Control turning off is a real answer (its own path): turning on again refuses again.
    @Test func globalPrivacyControlOffStillMakesTheNextOnCount() async throws {
        let system = ConsentSystem()
        try await system.consent.applyGlobalPrivacyControl(true)
        try await system.consent.setStatus(.granted, for: .advertising, source: .user)
        try await system.consent.applyGlobalPrivacyControl(true)
        #expect(await system.consent.status(for: .advertising) == .granted)
        try await system.consent.applyGlobalPrivacyControl(false)
        system.relaunch(configuration: [], reset: false)
        try await system.consent.applyGlobalPrivacyControl(true)
        #expect(await system.consent.status(for: .advertising) == .denied)
    }
}
