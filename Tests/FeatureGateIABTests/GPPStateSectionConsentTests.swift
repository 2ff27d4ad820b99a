import FeatureGate
import FeatureGateIAB
import Testing

/// What the US state sections of a GPP string decide, through `CMPConsent` and `CMPConsentSource`: the usnat
/// mapping applied to each state's same-named fields, only for the sections `IABGPP_GppSID` lists.
@Suite struct GPPStateSectionConsentTests {
    typealias Keys = [String: CMPValue]

    static func keys(_ gpp: String, sectionIDs: String?) -> Keys {
        var keys: Keys = [CMPKey.gdprApplies: .number(0), CMPKey.gppString: .string(gpp)]
        if let sectionIDs { keys[CMPKey.gppSectionIDs] = .string(sectionIDs) }
        return keys
    }

    // usca (8): SaleOptOut 1 and SharingOptOut 2, every notice 1, MspaCoveredTransaction 1, GPC subsection off.
    static let californiaSaleOptOut = "DBABBg~BVYAAABA.Q"

    @Test func aCaliforniaSaleOptOutDeniesThirdPartySharingWhenSection8Applies() {
        let consent = CMPConsent(keys: Self.keys(Self.californiaSaleOptOut, sectionIDs: "8"))
        #expect(consent.decisions == [.thirdPartySharing: .denied])
        #expect(consent.globalPrivacyControl == false)
        #expect(!consent.hasErrors)
    }

    @Test func aSectionDecidesOnlyWhenTheSectionIDsListIt() {
        #expect(CMPConsent(keys: Self.keys(Self.californiaSaleOptOut, sectionIDs: "7")).decisions == [:])
        #expect(CMPConsent(keys: Self.keys(Self.californiaSaleOptOut, sectionIDs: "7")).globalPrivacyControl == nil)
        // Absent, every section of the string applies (as for usnat).
        #expect(
            CMPConsent(keys: Self.keys(Self.californiaSaleOptOut, sectionIDs: nil)).decisions == [
                .thirdPartySharing: .denied
            ])
    }

    @Test(arguments: [
        // usca: SharingOptOut 1 denies both; Gpc 1 denies both.
        ("DBABBg~BVkAAABA.Q", "8", [ConsentCategory.thirdPartySharing, .advertising]),
        ("DBABBg~BVoAAABA.Y", "8", [.thirdPartySharing, .advertising]),
        // ustx (16): TargetedAdvertisingOptOut 1 denies advertising only.
        ("DBABEw~BVkAAAQ.Q", "16", [.advertising]),
        // usin (25), MspaVersion first: SaleOptOut 1, as published (with and without Sensitive Data Consents)…
        ("DBABUY~BRVg.AAA", "25", [.thirdPartySharing]),
        ("DBABUY~BRVg", "25", [.thirdPartySharing]),
        // …and in the June 2026 draft layout (a 40-bit core, a GPC subsection), read as that draft.
        ("DBABUY~BRVgAAA.Q", "25", [.thirdPartySharing]),
        // The reference strings with every opt-out set: each state denies what its fields cover.
        ("DBABBg~BVWSSSVY.YA", "8", [.thirdPartySharing, .advertising]),
        ("DBABEw~BVWSSVW", "16", [.thirdPartySharing, .advertising]),
    ])
    func eachStatesOptOutsDenyWhatTheyCover(gpp: String, sectionIDs: String, denied: [ConsentCategory]) {
        let consent = CMPConsent(keys: Self.keys(gpp, sectionIDs: sectionIDs))
        #expect(consent.decisions == Dictionary(uniqueKeysWithValues: denied.map { ($0, .denied) }))
        #expect(!consent.hasErrors)
    }

    @Test func aStateThatDidNotOptOutGrantsNothing() {
        // The reference defaults: every opt-out 0 (not applicable).
        #expect(CMPConsent(keys: Self.keys("DBABBg~BAAAAABA.QA", sectionIDs: "8")).decisions == [:])
        #expect(CMPConsent(keys: Self.keys("DBABUY~BQAA.AAA", sectionIDs: "25")).decisions == [:])
        #expect(CMPConsent(keys: Self.keys("DBABUY~BQAAAAA", sectionIDs: "25")).decisions == [:])
    }

    @Test func aJuneDraftSectionDecidesAndWarnsNamingTheDraft() {
        let consent = CMPConsent(keys: Self.keys("DBABUY~BRVgAAA.Q", sectionIDs: "25"))
        #expect(consent.decisions == [.thirdPartySharing: .denied])
        #expect(!consent.hasErrors)
        #expect(consent.diagnostics.map(\.severity) == [.warning])
        #expect(consent.diagnostics.first?.message.contains("usin section is in the June 2026 draft layout") == true)
        // The published layout warns about nothing.
        #expect(CMPConsent(keys: Self.keys("DBABUY~BRVg.AAA", sectionIDs: "25")).diagnostics.isEmpty)
    }

    @Test func aMalformedStateSectionFailsClosedNamingSectionFieldAndBit() {
        // usca with SaleOptOut = 3 at bit 12.
        let consent = CMPConsent(keys: Self.keys("DBABBg~BV2SSSVY", sectionIDs: "8"))
        #expect(consent.decisions == [.thirdPartySharing: .unknown, .advertising: .unknown])
        #expect(consent.diagnostics.map(\.key) == [CMPKey.gppString])
        #expect(consent.diagnostics.first?.message.contains("usca section, SaleOptOut at bit 12") == true)
    }

    @Test func aStatesGPCSubsectionReachesTheConsentManagerAsTheGPCSource() async throws {
        let (privacy, consent) = gpcConsentManager()
        let keys: Keys = [CMPKey.gppString: .string("DBABBg~BAAAAABA.YA"), CMPKey.gppSectionIDs: .string("8")]
        let refresh = await CMPConsentSource(consentManager: consent, keys: keys).refresh()
        #expect(refresh.consent.globalPrivacyControl == true)
        #expect(refresh.records.contains { $0.source == .gpc && $0.category == .thirdPartySharing })
        #expect(await consent.context.isGlobalPrivacyControlOn)
        #expect(!privacy.isEnabled(.contacts))
    }
}

/// Every reference string of `GPPUSSectionVectorTests`, as a CMP writes it (a header listing its one section, and
/// `IABGPP_GppSID` naming it): what it opted out of is denied, and nothing else is decided.
@Suite struct GPPReferenceStringConsentTests {
    /// A GPP header listing section `id` alone: Type 3, Version 1, one entry, not a range, `id` Fibonacci-coded.
    static func header(_ id: Int) -> String {
        var weights = [1, 2]
        while weights.last! <= id { weights.append(weights[weights.count - 1] + weights[weights.count - 2]) }
        var remaining = id
        var code = Array(repeating: "0", count: weights.count)
        for index in weights.indices.reversed() where weights[index] <= remaining {
            code[index] = "1"
            remaining -= weights[index]
        }
        var bits = String(code.joined().reversed().drop { $0 == "0" }.reversed()) + "1"
        bits = "0" + bits
        var writer = BitWriter()
        writer.append(3, 6, "Type")
        writer.append(1, 6, "Version")
        writer.append(1, 12, "NumEntries")
        writer.appendBits(bits, "SectionIds")
        return writer.base64URL
    }

    @Test func everyReferenceStringDeniesWhatItOptedOutOf() throws {
        var optedOut = 0
        for vector in GPPUSSectionVectorTests.vectors + GPPUSSectionVectorTests.draftVectors {
            let values = Dictionary(vector.fields, uniquingKeysWith: { first, _ in first })
            var expected: [ConsentCategory: ConsentStatus] = [:]
            if values["SaleOptOut"] == .int(1) { expected[.thirdPartySharing] = .denied }
            if values["SharingOptOut"] == .int(1) {
                expected[.thirdPartySharing] = .denied
                expected[.advertising] = .denied
            }
            if values["TargetedAdvertisingOptOut"] == .int(1) { expected[.advertising] = .denied }
            if values["Gpc"] == .bool(true) {
                expected[.thirdPartySharing] = .denied
                expected[.advertising] = .denied
            }
            let gpp = Self.header(vector.section) + "~" + vector.string
            let consent = CMPConsent(
                keys: [
                    CMPKey.gdprApplies: .number(0), CMPKey.gppString: .string(gpp),
                    CMPKey.gppSectionIDs: .string("\(vector.section)"),
                ])
            #expect(consent.decisions == expected, "\(vector.section) \(gpp)")
            #expect(!consent.hasErrors, "\(vector.section) \(gpp)")
            if !expected.isEmpty { optedOut += 1 }
        }
        // The "every field set" strings of each section opt out (with or without their GPC subsection), the two
        // June-draft ones included.
        #expect(optedOut == 44)
    }

    @Test func theHeaderEncodesOneSection() throws {
        for id in [1, 2, 5, 6, 28, 40, 100] { #expect(try GPPString(Self.header(id) + "~1YNN").sectionIDs == [id]) }
        #expect(Self.header(8) == "DBABBg")
    }
}
