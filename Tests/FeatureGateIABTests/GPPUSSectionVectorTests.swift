import FeatureGateIAB
import Testing

/// Every US section of GPP (US National, 7, and every state, 8 to 27) against the strings in the IAB's reference
/// libraries' tests (IABTechLab/iabgpp-es `test/encoder/section/Us*.test.ts`, IABTechLab/iabgpp-java
/// `Us*Test.java`): each string decodes to the fields those tests set, field for field, in order. The expectations
/// are written out here, not derived from FeatureGate's own layout table, so a wrong length or order in the table
/// fails them.
@Suite struct GPPUSSectionVectorTests {
    typealias Expected = [(String, GPPUSSection.Value)]

    struct Vector: CustomTestStringConvertible, Sendable {
        var section: Int
        var string: String
        var fields: [(String, GPPUSSection.Value)]
        var testDescription: String { "\(section) \(string)" }
    }

    static func int(_ name: String, _ value: Int) -> (String, GPPUSSection.Value) { (name, .int(value)) }
    static func list(_ name: String, _ values: [Int]) -> (String, GPPUSSection.Value) { (name, .list(values)) }
    static let gpcOn: Expected = [int("SubsectionType", 1), ("Gpc", .bool(true))]
    static let gpcOff: Expected = [int("SubsectionType", 1), ("Gpc", .bool(false))]
    static let mspaSet: Expected = [
        int("MspaCoveredTransaction", 1), int("MspaOptOutOptionMode", 1), int("MspaServiceProviderMode", 2),
    ]
    static let sensitive8 = [2, 1, 0, 2, 1, 0, 2, 1]

    /// The reference tests' "every field set" value for each field: notices, opt-outs and consents 1, the lists
    /// as given, MSPA 1, 1, 2.
    static func allSet(_ names: [String], lists: [String: [Int]]) -> Expected {
        [int("Version", 1)]
            + names.map { name in lists[name].map { (name, .list($0)) } ?? int(name, 1) } + mspaSet
    }

    /// The reference tests' defaults: every field 0 but the version and `MspaCoveredTransaction` (1).
    static func defaults(_ expected: Expected) -> Expected {
        expected.compactMap { name, value in
            switch (name, value) {
            case ("SubsectionType", _), ("Gpc", _): nil
            case ("Version", _), ("MspaVersion", _): (name, value)
            case ("MspaCoveredTransaction", _): (name, .int(1))
            case (_, .list(let values)): (name, .list(Array(repeating: 0, count: values.count)))
            default: (name, .int(0))
            }
        }
    }

    static let commonNames = [
        "SaleOptOutNotice", "TargetedAdvertisingOptOutNotice", "SaleOptOut", "TargetedAdvertisingOptOut",
        "SensitiveDataProcessing", "KnownChildSensitiveDataConsents",
    ]
    static let national1 = allSet(
        [
            "SharingNotice", "SaleOptOutNotice", "SharingOptOutNotice", "TargetedAdvertisingOptOutNotice",
            "SensitiveDataProcessingOptOutNotice", "SensitiveDataLimitUseNotice", "SaleOptOut", "SharingOptOut",
            "TargetedAdvertisingOptOut", "SensitiveDataProcessing", "KnownChildSensitiveDataConsents",
            "PersonalDataConsents",
        ],
        lists: [
            "SensitiveDataProcessing": [2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0], "KnownChildSensitiveDataConsents": [2, 1],
        ])
    static let national2: Expected =
        [int("Version", 2)]
        + national1.dropFirst().map { name, value in
            switch name {
            case "SensitiveDataProcessing": (name, .list([2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2]))
            case "KnownChildSensitiveDataConsents": (name, .list([2, 1, 0]))
            default: (name, value)
            }
        }
    static let california = allSet(
        [
            "SaleOptOutNotice", "SharingOptOutNotice", "SensitiveDataLimitUseNotice", "SaleOptOut", "SharingOptOut",
            "SensitiveDataProcessing", "KnownChildSensitiveDataConsents", "PersonalDataConsents",
        ],
        lists: ["SensitiveDataProcessing": [2, 1, 0, 2, 1, 0, 2, 1, 0], "KnownChildSensitiveDataConsents": [2, 1]])

    /// A state section of the common layout: `first` notice, an optional extra notice after the targeted
    /// advertising one, the lists, and `AdditionalDataProcessingConsent` when `additional`.
    static func state(
        first: String, extra: String? = nil, sensitive: [Int], child: [Int], additional: Bool
    ) -> Expected {
        var names = [first, "SaleOptOutNotice", "TargetedAdvertisingOptOutNotice"]
        if let extra { names.append(extra) }
        names += ["SaleOptOut", "TargetedAdvertisingOptOut", "SensitiveDataProcessing"]
        var lists = ["SensitiveDataProcessing": sensitive]
        if child != [1] {
            lists["KnownChildSensitiveDataConsents"] = child
        }
        names.append("KnownChildSensitiveDataConsents")
        if additional { names.append("AdditionalDataProcessingConsent") }
        return allSet(names, lists: lists)
    }

    static func mspaFirst(sensitive: Bool, child: Bool) -> Expected {
        var fields: Expected = [
            int("MspaVersion", 1), int("MspaCoveredTransaction", 1), int("MspaMode", 1), int("ProcessingNotice", 1),
            int("SaleOptOutNotice", 1), int("TargetedAdvertisingOptOutNotice", 1), int("SaleOptOut", 1),
            int("TargetedAdvertisingOptOut", 1),
        ]
        if child { fields.append(int("KnownChildSensitiveDataConsents", 1)) }
        fields.append(int("AdditionalDataProcessingConsent", 1))
        if sensitive { fields.append(list("SensitiveDataProcessing", sensitive8)) }
        return fields
    }

    static let virginia = state(first: "SharingNotice", sensitive: sensitive8, child: [1], additional: false)
    static let colorado = state(
        first: "SharingNotice", sensitive: [2, 1, 0, 2, 1, 0, 2], child: [1], additional: false)
    static let utah = state(
        first: "SharingNotice", extra: "SensitiveDataProcessingOptOutNotice", sensitive: sensitive8, child: [1],
        additional: false)
    static let connecticut = state(first: "SharingNotice", sensitive: sensitive8, child: [2, 1, 0], additional: false)
    static let florida = state(first: "ProcessingNotice", sensitive: sensitive8, child: [2, 1, 2], additional: true)
    static let montana = state(first: "SharingNotice", sensitive: sensitive8, child: [2, 1, 0], additional: true)
    static let oregon = state(
        first: "ProcessingNotice", sensitive: [2, 1, 0, 2, 1, 0, 2, 1, 0, 1, 2], child: [2, 1, 0], additional: true)
    static let texasLike = state(first: "ProcessingNotice", sensitive: sensitive8, child: [1], additional: true)
    static let delaware = state(
        first: "ProcessingNotice", sensitive: [2, 1, 0, 2, 1, 0, 2, 1, 0], child: [2, 1, 0, 2, 1], additional: true)
    static let iowa = state(
        first: "ProcessingNotice", extra: "SensitiveDataOptOutNotice", sensitive: sensitive8, child: [1],
        additional: false)
    static let newHampshire = state(
        first: "ProcessingNotice", sensitive: sensitive8, child: [2, 1, 0], additional: true)
    static let newJersey = state(
        first: "ProcessingNotice", sensitive: [2, 1, 0, 2, 1, 0, 2, 1, 0, 1], child: [2, 1, 0, 2, 1],
        additional: true)

    /// Each reference string: the section, the string, and the fields its test set (with the GPC subsection when
    /// the string has one). Defaults are the tests' "encode default" strings.
    static let vectors: [Vector] = {
        var vectors: [Vector] = []
        func add(
            _ section: Int, _ fields: Expected, gpc: [String], plain: [String], defaultsGPC: [String] = [],
            defaults defaultStrings: [String] = []
        ) {
            for string in gpc { vectors.append(Vector(section: section, string: string, fields: fields + gpcOn)) }
            for string in plain { vectors.append(Vector(section: section, string: string, fields: fields)) }
            let zero = Self.defaults(fields)
            for string in defaultsGPC {
                vectors.append(Vector(section: section, string: string, fields: zero + gpcOff))
            }
            for string in defaultStrings { vectors.append(Vector(section: section, string: string, fields: zero)) }
        }
        add(7, national1, gpc: ["BVVVkkkklWA.YA"], plain: [], defaultsGPC: ["BAAAAAAAAQA.QA"])
        add(
            7, national2, gpc: ["CVVVkkkkkpFY.YA"], plain: ["CVVVkkkkkpFY"], defaultsGPC: ["CAAAAAAAAABA.QA"],
            defaults: ["CAAAAAAAAABA"])
        add(8, california, gpc: ["BVWSSSVY.YA"], plain: [], defaultsGPC: ["BAAAAABA.QA"], defaults: ["BAAAAABA"])
        add(9, virginia, gpc: [], plain: ["BVWSSVY"], defaults: ["BAAAABA"])
        add(
            10, colorado, gpc: ["BVWSSVg.Y", "BVWSSVg.YA"], plain: ["BVWSSVg"], defaultsGPC: ["BAAAAEA.Q"],
            defaults: ["BAAAAEA"])
        add(11, utah, gpc: [], plain: ["BVVkklW", "BVVkklWA"], defaults: ["BAAAAAQ"])
        add(12, connecticut, gpc: ["BVWSSZFg.YA"], plain: [], defaultsGPC: ["BAAAAAEA.QA"], defaults: ["BAAAAAEA"])
        add(13, florida, gpc: [], plain: ["BVWSSZlY"], defaults: ["BAAAAABA"])
        add(
            14, montana, gpc: ["BVWSSZFY.YA"], plain: ["BVWSSZFY"], defaultsGPC: ["BAAAAABA.QA"],
            defaults: ["BAAAAABA"])
        add(
            15, oregon, gpc: ["BVWSSRpFYA.YA"], plain: ["BVWSSRpFYA"], defaultsGPC: ["BAAAAAABAA.QA"],
            defaults: ["BAAAAAABAA"])
        add(
            16, texasLike, gpc: ["BVWSSVW.Y", "BVWSSVWA.YA"], plain: ["BVWSSVW"], defaultsGPC: ["BAAAAAQ.Q"],
            defaults: ["BAAAAAQ"])
        add(
            17, delaware, gpc: ["BVWSSSSVY.Y", "BVWSSSSVYA.YA"], plain: ["BVWSSSSVY"], defaultsGPC: ["BAAAAAABA.Q"],
            defaults: ["BAAAAAABA"])
        add(
            18, iowa, gpc: ["BVVkklW.Y", "BVVkklWA.YA"], plain: ["BVVkklW"], defaultsGPC: ["BAAAAAQ.Q"],
            defaults: ["BAAAAAQ"])
        add(
            19, texasLike, gpc: ["BVWSSVW.Y", "BVWSSVWA.YA"], plain: ["BVWSSVW"], defaultsGPC: ["BAAAAAQ.Q"],
            defaults: ["BAAAAAQ"])
        add(
            20, newHampshire, gpc: ["BVWSSZFY.Y", "BVWSSZFY.YA"], plain: ["BVWSSZFY"], defaultsGPC: ["BAAAAABA.Q"],
            defaults: ["BAAAAABA"])
        add(
            21, newJersey, gpc: ["BVWSSRklWA.YA"], plain: ["BVWSSRklWA"], defaultsGPC: ["BAAAAAAAQA.QA"],
            defaults: ["BAAAAAAAQA"])
        add(
            22, texasLike, gpc: ["BVWSSVWA.YA"], plain: ["BVWSSVWA"], defaultsGPC: ["BAAAAAQA.QA"],
            defaults: ["BAAAAAQA"])
        add(
            23, texasLike, gpc: ["BVWSSVW.Y", "BVWSSVWA.YA"], plain: ["BVWSSVWA"], defaultsGPC: ["BAAAAAQ.Q"],
            defaults: ["BAAAAAQ"])
        add(
            24, mspaFirst(sensitive: false, child: false), gpc: ["BVVV.Y"], plain: [], defaultsGPC: ["BQAA.Q"],
            defaults: ["BQAA"])
        for section in 25...27 {
            add(
                section, mspaFirst(sensitive: true, child: true), gpc: ["BVVVkkk.YA"], plain: [],
                defaultsGPC: ["BQAAAAA.QA"], defaults: ["BQAAAAA"])
        }
        return vectors
    }()

    @Test(arguments: vectors)
    func referenceStringsDecodeFieldForField(vector: Vector) throws {
        let section = try GPPUSSection(sectionID: vector.section, vector.string)
        #expect(section.fields.map(\.name) == vector.fields.map(\.0))
        #expect(section.fields.map(\.value) == vector.fields.map(\.1))
    }

    /// iabgpp-java UsNatTest: version 1 and 2 strings with the lists set to 1 (version 2's string written from
    /// version 1's lists pads them with zeros).
    @Test(arguments: [
        ("BAAAVVVVUQA.QA", Array(repeating: 1, count: 12), [1, 1]),
        ("CAAAVVVVAFBA.QA", Array(repeating: 1, count: 12) + [0, 0, 0, 0], [1, 1, 0]),
        ("CAAAVVVVVVRA.QA", Array(repeating: 1, count: 16), [1, 1, 1]),
    ])
    func usNationalListsFollowTheVersion(string: String, sensitive: [Int], child: [Int]) throws {
        let section = try GPPUSSection(sectionID: 7, string)
        let base = Self.defaults(section.version == 1 ? Self.national1 : Self.national2) + Self.gpcOff
        let expected: Expected = base.map { name, value in
            switch name {
            case "SensitiveDataProcessing": (name, GPPUSSection.Value.list(sensitive))
            case "KnownChildSensitiveDataConsents": (name, GPPUSSection.Value.list(child))
            default: (name, value)
            }
        }
        #expect(section.fields.map(\.name) == expected.map(\.0))
        #expect(section.fields.map(\.value) == expected.map(\.1))
    }

    @Test func usNationalVersionOneAllTwos() throws {
        // iabgpp-es UsNat.test.ts "should decode BqqqqqqqqqA": every field 2 (the library pads the lists of
        // version 1 to version 2's lengths with zeros; version 1 holds 12 and 2 values).
        let section = try GPPUSSection(sectionID: 7, "BqqqqqqqqqA")
        #expect(section.version == 1)
        for field in section.fields.dropFirst() {
            switch field.value {
            case .int(let value): #expect(value == 2, "\(field.name)")
            case .list(let values): #expect(values == Array(repeating: 2, count: values.count), "\(field.name)")
            case .bool: Issue.record("no GPC subsection in BqqqqqqqqqA")
            }
        }
        #expect(section["SensitiveDataProcessing"] == .list(Array(repeating: 2, count: 12)))
        #expect(section.globalPrivacyControl == nil)
    }

    @Test func everySectionFrom7To27IsCovered() {
        #expect(GPPUSSection.sectionIDs == Array(7...27))
        #expect(Set(Self.vectors.map(\.section)) == Set(7...27))
        let names = GPPUSSection.sectionIDs.compactMap(GPPUSSection.name(ofSection:))
        #expect(
            names == [
                "usnat", "usca", "usva", "usco", "usut", "usct", "usfl", "usmt", "usor", "ustx", "usde", "usia",
                "usne", "usnh", "usnj", "ustn", "usmn", "usmd", "usin", "usky", "usri",
            ])
    }

    @Test func typedOptOutsFollowTheSectionsFields() throws {
        let california = try GPPUSSection(sectionID: 8, "BVWSSSVY.YA")
        #expect(california.saleOptOut == .optedOut && california.sharingOptOut == .optedOut)
        #expect(california.targetedAdvertisingOptOut == nil)
        #expect(california.globalPrivacyControl == true)
        let virginia = try GPPUSSection(sectionID: 9, "BVWSSVY")
        #expect(virginia.sharingOptOut == nil && virginia.targetedAdvertisingOptOut == .optedOut)
        #expect(virginia.globalPrivacyControl == nil)
        let maryland = try GPPUSSection(sectionID: 24, "BQAA.Q")
        #expect(maryland.saleOptOut == .notApplicable && maryland.globalPrivacyControl == false)
    }

    @Test(arguments: [
        (8, "BVWSSS", "usca", "KnownChildSensitiveDataConsents", 36),
        (8, "CVWSSSVY", "usca", "Version", 0),
        (24, "CVVV", "usmd", "MspaVersion", 0),
        (24, "BVV", "usmd", "TargetedAdvertisingOptOut", 18),
        (9, "BVWSSVY.YA", "usva.gpc", "SubsectionType", 0),
        (8, "BVWSSSVY.gA", "usca.gpc", "SubsectionType", 0),
        (8, "BVWSSSVY.YA.YA", "usca.gpc", "SubsectionType", 0),
        (8, "BVWSSSVY.", "usca.gpc", "base64url", 0),
        (8, "BV2SSSVY", "usca", "SaleOptOut", 12),
        (25, "BVVw", "usin", "TargetedAdvertisingOptOut", 18),
        (16, "BVWSS*W", "ustx", "base64url", 30),
    ])
    func malformedSectionsNameSectionFieldAndBit(id: Int, text: String, section: String, field: String, bit: Int) {
        #expect {
            try GPPUSSection(sectionID: id, text)
        } throws: { error in
            let error = error as! GPPStringError
            return error.section == section && error.field == field && error.bitOffset == bit
        }
    }
}
