import FeatureGate
import Testing

@Suite struct FeatureTests {
    @Test func builtInFlagsUseAirshipBitPositions() {
        #expect(Feature.inAppAutomation.rawValue == 1 << 0)
        #expect(Feature.messageCenter.rawValue == 1 << 1)
        #expect(Feature.push.rawValue == 1 << 2)
        #expect(Feature.analytics.rawValue == 1 << 4)
        #expect(Feature.tagsAndAttributes.rawValue == 1 << 5)
        #expect(Feature.contacts.rawValue == 1 << 6)
        #expect(Feature.featureFlags.rawValue == 1 << 8)
    }

    @Test func allIsTheSevenFlagsAndLeavesRetiredBitsUnused() {
        let seven: Feature = [
            .inAppAutomation, .messageCenter, .push, .analytics, .tagsAndAttributes, .contacts, .featureFlags,
        ]
        #expect(Feature.all == seven)
        #expect(Feature.all.flags.count == 7)
        #expect(Feature.all.rawValue & (1 << 3) == 0)
        #expect(Feature.all.rawValue & (1 << 7) == 0)
    }

    @Test func descriptionListsConfigNames() {
        #expect(Feature([.push, .analytics]).description == "[push, analytics]")
        #expect(Feature([]).description == "[]")
        #expect(Feature.custom(bit: 17).description == "[bit17]")
    }

    @Test func flagsSplitASetLowestBitFirst() {
        #expect(
            Feature([.featureFlags, .inAppAutomation, .custom(bit: 31)]).flags == [
                .inAppAutomation, .featureFlags, .custom(bit: 31),
            ])
        #expect(Feature([]).flags.isEmpty)
    }
}

@Suite struct FeatureCatalogTests {
    @Test func builtInCatalogNamesMatchAirshipConfigNames() {
        let names = FeatureCatalog.builtIn.entries.map(\.name)
        #expect(
            names == [
                "in_app_automation", "message_center", "push", "analytics", "tags_and_attributes", "contacts",
                "feature_flags",
            ])
        #expect(FeatureCatalog.builtIn.allFeatures == .all)
        #expect(FeatureCatalog.builtIn.feature(named: "tags_and_attributes") == .tagsAndAttributes)
        #expect(FeatureCatalog.builtIn.feature(named: "chat") == nil)
    }

    @Test func registeringACustomFlagExtendsTheCatalogWithoutChangingTheOriginal() throws {
        let crash = Feature.custom(bit: 16)
        let catalog = try FeatureCatalog.builtIn.registering("crash_reports", as: crash)
        #expect(catalog.feature(named: "crash_reports") == crash)
        #expect(catalog.names(of: [.push, crash]) == ["push", "crash_reports"])
        #expect(catalog.allFeatures == Feature.all.union(crash))
        #expect(FeatureCatalog.builtIn.feature(named: "crash_reports") == nil)
        #expect(catalog.mask(Feature(rawValue: UInt.max)) == catalog.allFeatures)
    }

    @Test(arguments: [
        ("Crash", Feature.custom(bit: 16), FeatureCatalogError.invalidName("Crash")),
        ("1crash", Feature.custom(bit: 16), .invalidName("1crash")),
        ("all", Feature.custom(bit: 16), .reservedName("all")),
        ("none", Feature.custom(bit: 16), .reservedName("none")),
        ("push", Feature.custom(bit: 16), .nameTaken("push")),
        ("crash", Feature.analytics, .notACustomFlag(1 << 4)),
        ("crash", Feature(rawValue: 3 << 16), .notACustomFlag(3 << 16)),
        ("crash", Feature(rawValue: 1 << 32), .notACustomFlag(1 << 32)),
    ])
    func registeringRejects(name: String, feature: Feature, expected: FeatureCatalogError) {
        #expect(throws: expected) { try FeatureCatalog.builtIn.registering(name, as: feature) }
    }

    @Test func registeringTheSameBitTwiceIsRejected() throws {
        let catalog = try FeatureCatalog.builtIn.registering("crash", as: .custom(bit: 20))
        #expect(throws: FeatureCatalogError.flagTaken(1 << 20)) {
            try catalog.registering("other", as: .custom(bit: 20))
        }
    }
}
