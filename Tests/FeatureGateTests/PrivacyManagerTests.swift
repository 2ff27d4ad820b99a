import FeatureGate
import Foundation
import Testing

@Suite struct PrivacyManagerTests {
    @Test func isEnabledRequiresEveryGivenFeature() {
        let gate = manager([.push, .analytics])
        #expect(gate.isEnabled(.push))
        #expect(gate.isEnabled([.push, .analytics]))
        #expect(!gate.isEnabled([.push, .contacts]))
        #expect(!gate.isEnabled(.contacts))
    }

    @Test func isEnabledOfTheEmptySetIsTrueOnlyWhenNothingIsEnabled() {
        #expect(manager([]).isEnabled([]))
        #expect(!manager(.push).isEnabled([]))
    }

    @Test func anyChecks() {
        let gate = manager(.push)
        #expect(gate.isAnyEnabled())
        #expect(gate.isAnyEnabled([.push, .contacts]))
        #expect(!gate.isAnyEnabled([.analytics, .contacts]))
        #expect(!gate.isAnyEnabled([]))
        #expect(!manager([]).isAnyEnabled())
    }

    @Test func enableAndDisableAreReadModifyWrites() {
        let gate = manager(.push)
        gate.enableFeatures([.analytics, .contacts])
        #expect(gate.enabledFeatures == [.push, .analytics, .contacts])
        gate.disableFeatures([.push, .contacts])
        #expect(gate.enabledFeatures == .analytics)
    }

    @Test func settingEnabledFeaturesReplacesTheLocalSetAndDropsUnknownBits() {
        let gate = manager(.push)
        gate.enabledFeatures = Feature(rawValue: Feature.analytics.rawValue | 1 << 3 | 1 << 7 | 1 << 20)
        #expect(gate.enabledFeatures == .analytics)
        gate.enableFeatures(.custom(bit: 20))
        #expect(gate.enabledFeatures == .analytics)
    }

    @Test func registeredCustomFlagsAreKept() throws {
        let crash = Feature.custom(bit: 16)
        let catalog = try FeatureCatalog.builtIn.registering("crash_reports", as: crash)
        let gate = manager([], catalog: catalog)
        gate.enableFeatures([crash, .push])
        #expect(gate.isEnabled(crash))
        #expect(gate.enabledFeatures == [crash, .push])
    }

    @Test func remoteDisabledSubtractsAndIsNeverWrittenIntoTheLocalSet() throws {
        let store = RecordingFeatureStore()
        let gate = manager([], store: store)
        gate.enableFeatures([.push, .analytics])
        let savesBefore = store.calls.saves

        gate.remoteDisabledFeatures = .analytics
        #expect(gate.enabledFeatures == .push)
        #expect(!gate.isEnabled(.analytics))
        #expect(gate.remoteDisabledFeatures == .analytics)
        #expect(store.calls.saves == savesBefore)
        #expect(store.storedFeatures == [.push, .analytics])

        gate.remoteDisabledFeatures = []
        #expect(gate.enabledFeatures == [.push, .analytics])
    }

    @Test func userChoicesMadeUnderTheKillSwitchSurviveItsLifting() {
        let gate = manager(.push)
        gate.remoteDisabledFeatures = .all
        gate.enableFeatures(.analytics)
        #expect(!gate.isAnyEnabled())
        gate.remoteDisabledFeatures = []
        #expect(gate.enabledFeatures == [.push, .analytics])
    }

    @Test func ignoringRemoteConfigLooksAtTheLocalSet() {
        let gate = manager(.push)
        gate.remoteDisabledFeatures = .all
        #expect(!gate.isAnyEnabled())
        #expect(!gate.isAnyFeatureEnabled(ignoringRemoteConfig: false))
        #expect(gate.isAnyFeatureEnabled(ignoringRemoteConfig: true))
        gate.disableFeatures(.push)
        #expect(!gate.isAnyFeatureEnabled(ignoringRemoteConfig: true))
    }

    @Test func reasonsSayWhoDecided() {
        let store = RecordingFeatureStore(stored: [.push, .analytics])
        let gate = manager([], store: store)
        #expect(
            gate.reason(for: .push)
                == FeatureReason(
                    feature: .push, isLocallyEnabled: true, isRemotelyDisabled: false, source: .storedState))
        #expect(gate.reason(for: .contacts).source == .storedState)
        #expect(!gate.reason(for: .contacts).isEnabled)

        gate.disableFeatures(.push)
        gate.remoteDisabledFeatures = .analytics
        let reason = gate.reason(for: .analytics)
        #expect(reason.isLocallyEnabled && reason.isRemotelyDisabled && !reason.isEnabled)
        #expect(reason.source == .storedState)
        #expect(reason.description == "analytics: off (remote kill switch; locally on by stored state)")
        #expect(gate.reason(for: .push).source == .app)
        #expect(gate.reason(for: .push).description == "push: off (locally off by app)")
        #expect(gate.reasons().map(\.feature) == Feature.all.flags)
    }

    @Test func reasonIsConfigurationWhenNothingWasStored() {
        let gate = manager(.push)
        #expect(gate.reasons().allSatisfy { $0.source == .configuration })
        #expect(gate.reason(for: .push).isEnabled)
    }

    @Test func saveFailureKeepsTheChangeInMemoryAndIsReported() {
        let diagnostics = Collector<String>()
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []),
            store: RecordingFeatureStore(failSave: true),
            diagnosticHandler: { diagnostics.append($0.description) }
        )
        gate.enableFeatures(.push)
        #expect(gate.isEnabled(.push))
        #expect(diagnostics.all.count == 1)
        #expect(diagnostics.all.first?.hasPrefix("recording store: cannot save features") == true)
    }
}
