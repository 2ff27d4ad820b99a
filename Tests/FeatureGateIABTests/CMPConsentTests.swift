import FeatureGate
import FeatureGateIAB
import Testing

/// The pure mapping from a CMP's keys to category statuses and Consent Mode values: every rule of the issue.
@Suite struct CMPConsentTests {
    typealias Keys = [String: CMPValue]

    /// Binary-string value with the 1-based `ids` set, `length` characters long.
    static func bits(_ ids: Set<Int>, length: Int = 24) -> CMPValue {
        .string(String((1...length).map { ids.contains($0) ? "1" : "0" }))
    }

    /// GDPR applies and the publisher keys say `consent` and `legitimateInterest`.
    static func publisher(_ consent: Set<Int>, legitimateInterest: Set<Int> = []) -> Keys {
        [
            CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: bits(consent),
            CMPKey.publisherLegitimateInterests: bits(legitimateInterest),
        ]
    }

    /// A TC string whose publisher-TC segment says `consent` (and whose global purposes say the same).
    static func tcString(publisherConsent consent: Set<Int>, vendors: Set<Int> = []) -> String {
        var core = BitWriter()
        var fields = CoreFields()
        fields.purposeConsents = consent
        fields.purposeLegitimateInterests = []
        fields.write(to: &core)
        core.appendVendorBitField(vendors, maximum: vendors.max() ?? 0, prefix: "")
        core.appendVendorBitField([], maximum: 0, prefix: "")
        core.append(0, 12, "")
        var publisher = BitWriter()
        publisher.append(3, 3, "")
        publisher.appendBitField(consent, 24, "")
        publisher.appendBitField([], 24, "")
        publisher.append(0, 6, "")
        return core.base64URL + "." + publisher.base64URL
    }

    /// `IABTCF_gdprApplies` = 0: TCF says nothing, so a test sees only the US signals.
    static let outsideGDPR: Keys = [CMPKey.gdprApplies: .number(0)]

    @Test func withoutATCFTableTCFSaysNothingEvenWhenGDPRIsUnset() {
        let consent = CMPConsent(
            keys: [CMPKey.usPrivacyString: .string("1YYN")], mapping: TCFPurposeMapping(requirements: [:]))
        #expect(consent.decisions == [.thirdPartySharing: .denied])
    }

    @Test func gdprNotApplyingSaysNothing() {
        let consent = CMPConsent(keys: [CMPKey.gdprApplies: .number(0), CMPKey.publisherConsent: Self.bits([])])
        #expect(consent.decisions.isEmpty)
        #expect(consent.status(for: .analytics) == .unknown)
        #expect(consent.diagnostics.isEmpty)
    }

    @Test func gdprUnsetOrUnansweredIsUnknown() {
        for keys: Keys in [
            [:], [CMPKey.gdprApplies: .number(1)], [CMPKey.gdprApplies: .number(1), CMPKey.tcString: .string("")],
        ] {
            let consent = CMPConsent(keys: keys)
            #expect(consent.decisions == [.analytics: .unknown, .advertising: .unknown], "\(keys)")
        }
    }

    @Test func purposesAnsweredGrantOnlyCategoriesWhosePurposesAllCount() {
        let consent = CMPConsent(keys: Self.publisher([1, 8]))
        #expect(consent.decisions == [.analytics: .granted, .advertising: .denied])
        #expect(
            CMPConsent(keys: Self.publisher([1, 3, 4, 7])).decisions == [.analytics: .denied, .advertising: .granted])
        #expect(
            CMPConsent(keys: Self.publisher([3, 4, 7, 8, 9])).decisions == [.analytics: .denied, .advertising: .denied])
        #expect(CMPConsent(keys: Self.publisher([1, 9])).status(for: .analytics) == .granted)
    }

    @Test func legitimateInterestCountsOnlyWhereTCFTwoPointTwoAllowsIt() {
        #expect(CMPConsent(keys: Self.publisher([1], legitimateInterest: [8])).status(for: .analytics) == .granted)
        #expect(CMPConsent(keys: Self.publisher([8], legitimateInterest: [1])).status(for: .analytics) == .denied)
        let adsByLI = CMPConsent(keys: Self.publisher([1, 7], legitimateInterest: [3, 4, 5, 6]))
        #expect(adsByLI.status(for: .advertising) == .denied)
        #expect(
            CMPConsent(keys: Self.publisher([1, 3, 4], legitimateInterest: [7])).status(for: .advertising) == .granted)
    }

    @Test func thirdPartySharingIsDecidedOnlyWhenTheAppListsVendors() {
        var keys = Self.publisher([1, 8])
        keys[CMPKey.vendorConsents] = Self.bits([10, 755], length: 800)
        #expect(CMPConsent(keys: keys).decisions[.thirdPartySharing] == nil)
        #expect(
            CMPConsent(keys: keys, mapping: .default(sharingWith: [10, 755])).status(for: .thirdPartySharing)
                == .granted)
        #expect(
            CMPConsent(keys: keys, mapping: .default(sharingWith: [10, 11])).status(for: .thirdPartySharing) == .denied)
    }

    @Test func aVendorSubjectNeedsItsOwnVendorBit() {
        var keys: Keys = [
            CMPKey.gdprApplies: .number(1), CMPKey.purposeConsents: Self.bits([1, 8]),
            CMPKey.vendorConsents: Self.bits([5], length: 6),
            CMPKey.tcString: .string(Self.tcString(publisherConsent: [1, 8], vendors: [5])),
        ]
        #expect(CMPConsent(keys: keys, subject: .vendor(5)).status(for: .analytics) == .granted)
        #expect(CMPConsent(keys: keys, subject: .vendor(6)).status(for: .analytics) == .denied)

        // Without the TC string the publisher's restrictions cannot be read: the keys deny, never grant.
        keys[CMPKey.tcString] = nil
        let withoutString = CMPConsent(keys: keys, subject: .vendor(5))
        #expect(withoutString.status(for: .analytics) == .unknown)
        #expect(withoutString.diagnostics.map(\.key) == [CMPKey.tcString])
        #expect(CMPConsent(keys: keys, subject: .vendor(6)).status(for: .analytics) == .denied)
        // Nor are there publisher keys: for the app's own processing there is no answer yet.
        #expect(CMPConsent(keys: keys, subject: .publisher).status(for: .analytics) == .unknown)
    }

    @Test func aPublisherRestrictionInTheStringTakesAPurposeFromAVendor() throws {
        var core = BitWriter()
        var fields = CoreFields()
        fields.purposeConsents = [1, 8]
        fields.write(to: &core)
        core.appendVendorBitField([5], maximum: 5, prefix: "")
        core.appendVendorBitField([], maximum: 0, prefix: "")
        core.append(1, 12, "")
        core.append(8, 6, "")
        core.append(0, 2, "")
        core.appendVendorRanges([5...5], maximum: nil, prefix: "")
        let keys: Keys = [CMPKey.gdprApplies: .number(1), CMPKey.tcString: .string(core.base64URL)]
        #expect(CMPConsent(keys: keys, subject: .vendor(5)).status(for: .analytics) == .denied)
    }

    @Test func anUndefinedRestrictionTakesThePurposeFromTheVendorsItCoversWithAWarning() {
        var fields = CoreFields()
        fields.purposeConsents = [1, 8]
        let core = BitWriter.core(
            fields, vendorConsents: [5, 6], restrictions: [RestrictionFields(purpose: 8, type: 3, vendors: [5...5])])
        let keys: Keys = [CMPKey.gdprApplies: .number(1), CMPKey.tcString: .string(core.base64URL)]
        let covered = CMPConsent(keys: keys, subject: .vendor(5))
        #expect(covered.status(for: .analytics) == .denied)
        #expect(!covered.hasErrors)
        #expect(
            covered.diagnostics == [
                CMPDiagnostic(
                    severity: .warning, key: CMPKey.tcString,
                    message: "a publisher restriction of type 3 (undefined) covers vendor 5 for purpose 8; "
                        + "read as not allowed")
            ])
        // The rest of the string still counts: a vendor the restriction does not cover keeps its grant.
        let other = CMPConsent(keys: keys, subject: .vendor(6))
        #expect(other.status(for: .analytics) == .granted)
        #expect(other.diagnostics.isEmpty)
    }

    @Test func aGlobalScopeStringUnderPolicyVersionFourIsUnknownNotGranted() {
        var fields = CoreFields()
        fields.purposeConsents = [1, 8]
        fields.isServiceSpecific = false
        let keys: Keys = [
            CMPKey.gdprApplies: .number(1),
            CMPKey.tcString: .string(BitWriter.core(fields, vendorConsents: [5]).base64URL),
        ]
        let consent = CMPConsent(keys: keys, subject: .vendor(5))
        #expect(consent.status(for: .analytics) == .unknown)
        #expect(consent.hasErrors)
        #expect(consent.diagnostics.first?.message.contains("IsServiceSpecific at bit 138") == true)
        // Under an earlier policy version the same string decodes and grants.
        fields.policyVersion = 2
        let older: Keys = [
            CMPKey.gdprApplies: .number(1),
            CMPKey.tcString: .string(BitWriter.core(fields, vendorConsents: [5]).base64URL),
        ]
        #expect(CMPConsent(keys: older, subject: .vendor(5)).status(for: .analytics) == .granted)
    }

    @Test func whenTheStringAndTheKeysDisagreeTheMoreRestrictiveWins() {
        var keys = Self.publisher([1, 3, 4, 7, 8])
        keys[CMPKey.tcString] = .string(Self.tcString(publisherConsent: [1, 8]))
        let consent = CMPConsent(keys: keys)
        #expect(consent.decisions == [.analytics: .granted, .advertising: .denied])
        #expect(consent.diagnostics.map(\.severity) == [.warning])
        #expect(!consent.hasErrors)
        // The other way round: the string grants advertising, the keys do not.
        var reverse = Self.publisher([1, 8])
        reverse[CMPKey.tcString] = .string(Self.tcString(publisherConsent: [1, 3, 4, 7, 8]))
        #expect(CMPConsent(keys: reverse).decisions == [.analytics: .granted, .advertising: .denied])
    }

    @Test func theStringAloneDecidesWhenThereAreNoPreParsedKeys() {
        let keys: Keys = [
            CMPKey.gdprApplies: .number(1), CMPKey.tcString: .string(Self.tcString(publisherConsent: [1, 3, 4, 7])),
        ]
        #expect(CMPConsent(keys: keys).decisions == [.analytics: .denied, .advertising: .granted])
    }

    @Test func anUnreadableStringGrantsNothing() {
        var keys = Self.publisher([1, 3, 4, 7, 8])
        keys[CMPKey.tcString] = .string("BO2e4qiO2e4qiB9ABADEDS-AAAAxKABgACBiQA")
        let consent = CMPConsent(keys: keys)
        #expect(consent.decisions == [.analytics: .unknown, .advertising: .unknown])
        #expect(consent.hasErrors)
        #expect(consent.diagnostics.first?.key == CMPKey.tcString)
        #expect(consent.consentMode.adStorage == .denied)
        // A denial the keys make still stands.
        var denied = Self.publisher([1, 8])
        denied[CMPKey.tcString] = .string("not a tc string")
        #expect(CMPConsent(keys: denied).decisions == [.analytics: .unknown, .advertising: .denied])
    }

    @Test func malformedKeysFailClosed() {
        var keys = Self.publisher([1, 3, 4, 7, 8])
        keys[CMPKey.publisherLegitimateInterests] = .string("01x")
        #expect(CMPConsent(keys: keys).decisions == [.analytics: .unknown, .advertising: .unknown])
        #expect(CMPConsent(keys: keys).diagnostics.first?.key == CMPKey.publisherLegitimateInterests)
        for gdpr: CMPValue in [.string("1"), .number(2)] {
            var wrong = Self.publisher([1, 3, 4, 7, 8])
            wrong[CMPKey.gdprApplies] = gdpr
            let consent = CMPConsent(keys: wrong)
            #expect(consent.decisions == [.analytics: .unknown, .advertising: .unknown])
            #expect(consent.hasErrors)
        }
    }

    @Test func aUSPrivacyOptOutOfSaleDeniesThirdPartySharing() {
        #expect(
            CMPConsent(keys: Self.outsideGDPR + [CMPKey.usPrivacyString: .string("1YYN")]).decisions == [
                .thirdPartySharing: .denied
            ])
        #expect(CMPConsent(keys: Self.outsideGDPR + [CMPKey.usPrivacyString: .string("1YNN")]).decisions == [:])
        let malformed = CMPConsent(keys: Self.outsideGDPR + [CMPKey.usPrivacyString: .string("1Y")])
        #expect(malformed.decisions == [.thirdPartySharing: .unknown])
        #expect(malformed.hasErrors)
    }

    @Test func gppUSNationalOptOutsDenyWhatTheyCover() {
        let optedOut = CMPConsent(keys: Self.outsideGDPR + [CMPKey.gppString: .string("DBABLA~BVVVkkkklWA.YA")])
        #expect(optedOut.decisions == [.thirdPartySharing: .denied, .advertising: .denied])
        let notOptedOut = CMPConsent(keys: Self.outsideGDPR + [CMPKey.gppString: .string("DBABLA~BVQqAAAAAgA.QA")])
        #expect(notOptedOut.decisions == [:])
        let notApplicable = CMPConsent(
            keys: Self.outsideGDPR + [
                CMPKey.gppString: .string("DBABLA~BVVVkkkklWA.YA"), CMPKey.gppSectionIDs: .string("2"),
            ])
        #expect(notApplicable.decisions == [:])
        let applicable = CMPConsent(
            keys: Self.outsideGDPR + [
                CMPKey.gppString: .string("DBABLA~BVVVkkkklWA.YA"), CMPKey.gppSectionIDs: .string("2_7"),
            ])
        #expect(applicable.decisions == [.thirdPartySharing: .denied, .advertising: .denied])
        let malformed = CMPConsent(keys: Self.outsideGDPR + [CMPKey.gppString: .string("DBABLA~BAA")])
        #expect(malformed.decisions == [.thirdPartySharing: .unknown, .advertising: .unknown])
        #expect(malformed.hasErrors)
    }

    @Test func onlyTargetedAdvertisingOptOutLeavesSharingAlone() throws {
        // Version 1, notices 1, sale 2, sharing 2, targeted advertising 1 (opted out); the rest zero.
        var writer = BitWriter()
        writer.append(1, 6, "")
        for _ in 0..<6 { writer.append(1, 2, "") }
        writer.append(2, 2, "")
        writer.append(2, 2, "")
        writer.append(1, 2, "")
        writer.append(0, 36, "")
        let consent = CMPConsent(keys: Self.outsideGDPR + [CMPKey.gppString: .string("DBABLA~" + writer.base64URL)])
        #expect(consent.decisions == [.advertising: .denied])
    }

    @Test func usOptOutsOverrideATCFGrant() {
        var keys = Self.publisher([1, 3, 4, 7, 8])
        keys[CMPKey.gppString] = .string("DBABLA~BVVVkkkklWA.YA")
        let consent = CMPConsent(keys: keys, mapping: .default(sharingWith: []))
        #expect(consent.decisions == [.analytics: .granted, .advertising: .denied, .thirdPartySharing: .denied])
        #expect(consent.consentMode.adStorage == .denied)
        #expect(consent.consentMode.analyticsStorage == .granted)
    }

    @Test func anAppCanReplaceTheTable() {
        let mapping = TCFPurposeMapping(requirements: [
            .analytics: [[10]], ConsentCategory("personalization"): [[5, 6]],
        ])
        let consent = CMPConsent(keys: Self.publisher([10, 5]), mapping: mapping)
        #expect(consent.decisions == [.analytics: .granted, ConsentCategory("personalization"): .granted])
    }

    @Test func keysAreReadFromAnyKeyValueSource() {
        let source: [String: CMPValue] = [CMPKey.gdprApplies: .number(1), "unrelated": .string("x")]
        #expect(CMPKey.snapshot(of: source) == [CMPKey.gdprApplies: .number(1)])
    }
}

/// Google Consent Mode v2 values, from category statuses and from TCF purposes with Google's mapping.
@Suite struct ConsentModeSnapshotTests {
    @Test func fromCategoryStatuses() {
        let snapshot = ConsentModeSnapshot(statuses: [.analytics: .granted, .advertising: .denied])
        #expect(
            snapshot.parameters == [
                "analytics_storage": "granted", "ad_storage": "denied", "ad_user_data": "denied",
                "ad_personalization": "denied",
            ])
        #expect(ConsentModeSnapshot(statuses: [.advertising: .granted]).adPersonalization == .granted)
        #expect(ConsentModeSnapshot(statuses: [.advertising: .unknown]).adStorage == .denied)
    }

    @Test func fromAConsentManagersDecisionsWithTheChildMark() async throws {
        let policy = ConsentPolicy(
            version: 1, features: ConsentPolicy.default.features, childProhibited: [.advertising])
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all), store: InMemoryFeatureStore(),
            consentPolicy: policy)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .advertising, source: .user)
        #expect(await ConsentModeSnapshot.current(of: consent).adPersonalization == .granted)
        await consent.setChild(true)
        let child = await ConsentModeSnapshot.current(of: consent)
        #expect(child.isChildDirected)
        #expect(child.adStorage == .denied && child.adUserData == .denied && child.adPersonalization == .denied)
        #expect(child.analyticsStorage == .denied)
    }

    @Test(arguments: [
        (Set([1]), "granted", "denied", "denied"),
        (Set([1, 7]), "granted", "granted", "denied"),
        (Set([7]), "denied", "denied", "denied"),
        (Set([3, 4]), "denied", "denied", "granted"),
        (Set([3]), "denied", "denied", "denied"),
        (Set([1, 3, 4, 7]), "granted", "granted", "granted"),
    ])
    func googlesTCFMappingWhenTCFIsTheSource(
        purposes: Set<Int>, adStorage: String, adUserData: String, adPersonalization: String
    ) {
        let consent = CMPConsent(keys: CMPConsentTests.publisher(purposes))
        #expect(consent.consentMode.adStorage.rawValue == adStorage)
        #expect(consent.consentMode.adUserData.rawValue == adUserData)
        #expect(consent.consentMode.adPersonalization.rawValue == adPersonalization)
        #expect(consent.consentMode.analyticsStorage == .denied)
    }
}

extension Dictionary where Key == String, Value == CMPValue {
    /// The keys of both dictionaries; the right-hand side wins.
    static func + (lhs: Self, rhs: Self) -> Self { lhs.merging(rhs) { $1 } }
}
