import FeatureGate
import Foundation
import Testing

/// The settings screen's data at the package's floor (iOS 16, macOS 13), where `ConsentSettings` is unavailable.
@Suite struct ConsentSettingsSnapshotTests {
    @Test func aSnapshotReadsRowsFromTheStatusesAndTheAuditTrail() async throws {
        let ledger = InMemoryConsentLedger()
        try ledger.append(record(.analytics, .unknown, .granted, source: .migration))
        let consent = ConsentManager(privacy: manager([]), ledger: ledger)
        let snapshot = await ConsentSettingsSnapshot(consent: consent)
        #expect(snapshot.entries.map(\.category) == [.advertising, .analytics, .thirdPartySharing])
        #expect(
            snapshot.entries[1]
                == ConsentSettingsSnapshot.Entry(
                    category: .analytics, status: .granted, decidedAt: fixedTime, decidedBy: .migration))
        #expect(snapshot.details.map(\.decision.category) == snapshot.entries.map(\.category))
    }

    @Test func changesFedThroughApplyKeepTheRowsCurrentAndReportOnlyRealChanges() async throws {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger(), now: { fixedTime })
        let changes = LockedValue([ConsentChange]())
        let token = consent.observe { change in changes.withLock { $0.append(change) } }
        var snapshot = await ConsentSettingsSnapshot(consent: consent)
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        try await consent.setStatus(.granted, for: ConsentCategory("newsletter"), source: .cmp)
        let delivered = changes.withLock { $0 }
        #expect(delivered.count == 2)
        for change in delivered {
            let changed = snapshot.apply(change)
            #expect(changed)
        }
        let again = snapshot.apply(delivered[0])
        #expect(!again)
        #expect(snapshot.entries.first { $0.category == .analytics }?.status == .denied)
        #expect(snapshot.entries.first { $0.category == .analytics }?.decidedBy == .user)
        #expect(snapshot.entries.map(\.category) == snapshot.entries.map(\.category).sorted())
        #expect(snapshot.entries.contains { $0.category == ConsentCategory("newsletter") && $0.status == .granted })
        withExtendedLifetime(token) {}
    }
}
