import FeatureGate
import Foundation
import Testing

/// Which saves pay for `F_FULLFSYNC` on Darwin: every one that takes anything away.
@Suite struct StoreDurabilityTests {
    private typealias Record = FeatureStateRecord

    @Test func aSaveThatOnlyAddsIsOnlyOrdered() {
        let old = Record(enabledFeatures: .analytics, decidedFeatures: [.analytics, .push])
        #expect(FileFeatureStore.durability(replacing: old, with: old) == .ordered)
        let enabled = Record(enabledFeatures: [.analytics, .push], decidedFeatures: [.analytics, .push])
        #expect(FileFeatureStore.durability(replacing: old, with: enabled) == .ordered)
        let newlyDecidedOn = Record(
            enabledFeatures: [.analytics, .contacts], decidedFeatures: [.analytics, .push, .contacts])
        #expect(FileFeatureStore.durability(replacing: old, with: newlyDecidedOn) == .ordered)
        let withRefusal = Record(
            enabledFeatures: .analytics, decidedFeatures: .analytics, deniedConsentCategories: [.advertising])
        let refusalLifted = Record(enabledFeatures: .analytics, decidedFeatures: .analytics)
        #expect(FileFeatureStore.durability(replacing: withRefusal, with: refusalLifted) == .ordered)
    }

    @Test func aSaveThatTakesAnythingAwayIsWrittenThrough() {
        let old = Record(enabledFeatures: [.analytics, .push], decidedFeatures: [.analytics, .push])
        let disabled = Record(enabledFeatures: .push, decidedFeatures: [.analytics, .push])
        let undecided = Record(enabledFeatures: .push, decidedFeatures: .push)
        let newlyDecidedOff = Record(
            enabledFeatures: [.analytics, .push], decidedFeatures: [.analytics, .push, .contacts])
        let refused = Record(
            enabledFeatures: [.analytics, .push], decidedFeatures: [.analytics, .push],
            deniedConsentCategories: [.analytics])
        for new in [disabled, undecided, newlyDecidedOff, refused] {
            #expect(FileFeatureStore.durability(replacing: old, with: new) == .full, "\(new)")
        }
    }

    @Test func recordingOwedWorkDoneFlushesOnlyTheData() {
        var old = Record(enabledFeatures: [], decidedFeatures: [.analytics, .push])
        let pending = PendingRevocation(anonymousIdentifier: UUID(), isErasureOwed: true)
        old.pendingRevocation = pending
        old.purgeOwedFeatures = [.analytics, .push]
        var progressed = old
        progressed.pendingRevocation?.areSubsystemsPurged = true
        progressed.pendingRevocation?.isIdentifierDeleted = true
        progressed.pendingRevocation?.markErasureDone()
        var removed = old
        removed.pendingRevocation = nil
        var purged = old
        purged.purgeOwedFeatures = .push
        for new in [progressed, removed, purged] {
            #expect(FileFeatureStore.durability(replacing: old, with: new) == .dataOnly, "\(new)")
        }
        // Newly owed work, or anything else changed with it, is never left to the directory's next flush.
        var joined = old
        joined.pendingRevocation = PendingRevocation(anonymousIdentifier: nil, isErasureOwed: true)
        var owesMore = old
        owesMore.purgeOwedFeatures.insert(.contacts)
        var rejoined = progressed
        rejoined.pendingRevocation = progressed.pendingRevocation?.joined(by: pending)
        var doneAndDisabled = removed
        doneAndDisabled.decidedFeatures.insert(.contacts)
        for new in [joined, owesMore, doneAndDisabled] {
            #expect(FileFeatureStore.durability(replacing: old, with: new) != .dataOnly, "\(new)")
        }
        #expect(FileFeatureStore.durability(replacing: progressed, with: rejoined) != .dataOnly)
    }

    @Test func anUnknownRecordOnEitherSideIsWrittenThrough() {
        let record = Record(enabledFeatures: .analytics)
        #expect(FileFeatureStore.durability(replacing: nil, with: record) == .full)
        #expect(FileFeatureStore.durability(replacing: record, with: nil) == .full)
    }

    @Test func theStoreComparesWithWhatItLastReadOrWrote() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "durability-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appending(path: "state.json")
        let both = Record(enabledFeatures: [.analytics, .push], decidedFeatures: [.analytics, .push])
        let pushOnly = Record(enabledFeatures: .push, decidedFeatures: [.analytics, .push])
        try FileFeatureStore(url: url).save(both.encoded())

        let store = FileFeatureStore(url: url)
        #expect(store.durability(ofSaving: both) == .full, "nothing read yet: unknown")
        _ = try store.load()
        #expect(store.durability(ofSaving: pushOnly) == .full)
        #expect(store.durability(ofSaving: both) == .ordered)
        try store.save(pushOnly.encoded())
        #expect(store.durability(ofSaving: both) == .ordered, "compared with the record written")
        #expect(store.durability(ofSaving: Record(enabledFeatures: [], decidedFeatures: [.analytics, .push])) == .full)
    }
}
