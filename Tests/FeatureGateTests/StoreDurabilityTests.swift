import FeatureGate
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

    @Test func anUnknownRecordOnEitherSideIsWrittenThrough() {
        let record = Record(enabledFeatures: .analytics)
        #expect(FileFeatureStore.durability(replacing: nil, with: record) == .full)
        #expect(FileFeatureStore.durability(replacing: record, with: nil) == .full)
    }
}
