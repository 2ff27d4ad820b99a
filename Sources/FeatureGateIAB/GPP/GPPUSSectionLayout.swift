/// How one US section of a GPP string is laid out, field by field, as the IAB's GPP specification for that section
/// defines it (the "Section Information" table's US sections, 7 to 27).
///
/// Every section is one table entry: the decoder (``GPPString/USSection/init(sectionID:_:)``) reads any of them the same
/// way, so a new state is a new line here, not a new decoder.
struct GPPUSSectionLayout: Sendable {
    /// One field after the version: its IAB name, and how many two-bit values it holds (`nil`: a single value).
    struct Field: Sendable {
        let name: String
        let count: Int?
    }

    /// The section ID.
    let id: Int
    /// The section's API prefix (`usca`).
    let name: String
    /// The first field's name: `Version`, or `MspaVersion` in the sections from 2026 on (24–27).
    let versionField: String
    /// The fields after the version field, by the version that lays them out.
    let fieldsByVersion: [Int: [Field]]
    /// The optional subsection the section may carry after a dot, if any.
    let subsection: Subsection?
    /// A draft layout strings of this section may also be in, told apart from the published one by the length of
    /// their core.
    let draft: Draft?

    /// An optional subsection after the core.
    enum Subsection: Sendable {
        /// The Global Privacy Control subsection: a two-bit `SubsectionType` of 1, then the `Gpc` bit.
        case gpc
        /// An untyped subsection holding `fields` (the Sensitive Data Consents subsection of usin, usky and usri:
        /// the second part of the section is that subsection, with no type field before it).
        case untyped(name: String, fields: [Field])
    }

    /// A draft layout: its name, the core length from which a string is read in it, its fields and subsection.
    struct Draft: Sendable {
        let name: String
        let minimumCoreBits: Int
        let fields: [Field]
        let subsection: Subsection?
    }

    /// Every US section FeatureGate decodes, by ID.
    static let byID: [Int: GPPUSSectionLayout] = Dictionary(uniqueKeysWithValues: table.map { ($0.id, $0) })

    /// The GPC subsection's fields: a two-bit subsection type (1), then one bit.
    static let subsectionTypeField = "SubsectionType"
    static let gpcField = "Gpc"

    // The field lists, from the IAB's GPP US section specifications (field order and lengths as the IAB reference
    // implementations, iabgpp-es and iabgpp-java, lay them out: usin, usky and usri as the specifications of
    // October 2025 and iabgpp-es 3.2 have them). Every field is two bits unless it is a version.
    private static let table: [GPPUSSectionLayout] = [
        GPPUSSectionLayout(
            id: 7, name: "usnat", versionField: "Version",
            fieldsByVersion: [1: national(sensitive: 12, child: 2), 2: national(sensitive: 16, child: 3)],
            subsection: .gpc, draft: nil),
        state(
            8, "usca", gpc: true,
            notices(["SaleOptOutNotice", "SharingOptOutNotice", "SensitiveDataLimitUseNotice"])
                + [
                    one("SaleOptOut"), one("SharingOptOut"), list("SensitiveDataProcessing", 9),
                    list("KnownChildSensitiveDataConsents", 2), one("PersonalDataConsents"),
                ] + mspa),
        state(9, "usva", gpc: false, common(notice: "SharingNotice", sensitive: 8, child: 1, additional: false)),
        state(10, "usco", gpc: true, common(notice: "SharingNotice", sensitive: 7, child: 1, additional: false)),
        state(
            11, "usut", gpc: false,
            common(
                notice: "SharingNotice", extraNotice: "SensitiveDataProcessingOptOutNotice", sensitive: 8, child: 1,
                additional: false)),
        state(12, "usct", gpc: true, common(notice: "SharingNotice", sensitive: 8, child: 3, additional: false)),
        state(13, "usfl", gpc: false, common(notice: "ProcessingNotice", sensitive: 8, child: 3, additional: true)),
        state(14, "usmt", gpc: true, common(notice: "SharingNotice", sensitive: 8, child: 3, additional: true)),
        state(15, "usor", gpc: true, common(notice: "ProcessingNotice", sensitive: 11, child: 3, additional: true)),
        state(16, "ustx", gpc: true, common(notice: "ProcessingNotice", sensitive: 8, child: 1, additional: true)),
        state(17, "usde", gpc: true, common(notice: "ProcessingNotice", sensitive: 9, child: 5, additional: true)),
        state(
            18, "usia", gpc: true,
            common(
                notice: "ProcessingNotice", extraNotice: "SensitiveDataOptOutNotice", sensitive: 8, child: 1,
                additional: false)),
        state(19, "usne", gpc: true, common(notice: "ProcessingNotice", sensitive: 8, child: 1, additional: true)),
        state(20, "usnh", gpc: true, common(notice: "ProcessingNotice", sensitive: 8, child: 3, additional: true)),
        state(21, "usnj", gpc: true, common(notice: "ProcessingNotice", sensitive: 10, child: 5, additional: true)),
        state(22, "ustn", gpc: true, common(notice: "ProcessingNotice", sensitive: 8, child: 1, additional: true)),
        state(23, "usmn", gpc: true, common(notice: "ProcessingNotice", sensitive: 8, child: 1, additional: true)),
        mspaFirst(24, "usmd", child: false, subsection: .gpc, draft: nil),
        mspaFirst(25, "usin", child: true, subsection: sensitiveDataConsents, draft: juneDraft),
        mspaFirst(26, "usky", child: true, subsection: sensitiveDataConsents, draft: juneDraft),
        mspaFirst(27, "usri", child: true, subsection: sensitiveDataConsents, draft: juneDraft),
    ]

    private static func one(_ name: String) -> Field { Field(name: name, count: nil) }
    private static func list(_ name: String, _ count: Int) -> Field { Field(name: name, count: count) }
    private static func notices(_ names: [String]) -> [Field] { names.map(one) }

    /// The three MSPA fields every section from 8 to 23 ends with.
    private static let mspa = notices(["MspaCoveredTransaction", "MspaOptOutOptionMode", "MspaServiceProviderMode"])

    private static func state(_ id: Int, _ name: String, gpc: Bool, _ fields: [Field]) -> GPPUSSectionLayout {
        GPPUSSectionLayout(
            id: id, name: name, versionField: "Version", fieldsByVersion: [1: fields], subsection: gpc ? .gpc : nil,
            draft: nil)
    }

    /// US National: six notices, three opt-outs, the sensitive categories, the known-child consents, then MSPA.
    private static func national(sensitive: Int, child: Int) -> [Field] {
        notices([
            "SharingNotice", "SaleOptOutNotice", "SharingOptOutNotice", "TargetedAdvertisingOptOutNotice",
            "SensitiveDataProcessingOptOutNotice", "SensitiveDataLimitUseNotice", "SaleOptOut", "SharingOptOut",
            "TargetedAdvertisingOptOut",
        ])
            + [
                list("SensitiveDataProcessing", sensitive), list("KnownChildSensitiveDataConsents", child),
                one("PersonalDataConsents"),
            ] + mspa
    }

    /// The layout most state sections share: a notice, the sale and targeted-advertising notices (and one more in
    /// Utah and Iowa), the two opt-outs, the sensitive categories, the known-child consents (one value when
    /// `child` is 1), optionally `AdditionalDataProcessingConsent`, then MSPA.
    private static func common(
        notice: String, extraNotice: String? = nil, sensitive: Int, child: Int, additional: Bool
    ) -> [Field] {
        var fields = notices([notice, "SaleOptOutNotice", "TargetedAdvertisingOptOutNotice"])
        if let extraNotice { fields.append(one(extraNotice)) }
        fields += [one("SaleOptOut"), one("TargetedAdvertisingOptOut"), list("SensitiveDataProcessing", sensitive)]
        fields.append(
            child == 1 ? one("KnownChildSensitiveDataConsents") : list("KnownChildSensitiveDataConsents", child))
        if additional { fields.append(one("AdditionalDataProcessingConsent")) }
        return fields + mspa
    }

    /// The sections from 2026 on: `MspaVersion` first, then `MspaCoveredTransaction` and one `MspaMode`, the
    /// notices and opt-outs, then the consents (`KnownChildSensitiveDataConsents` in usin, usky and usri).
    private static func mspaFirstCore(child: Bool) -> [Field] {
        var fields = notices([
            "MspaCoveredTransaction", "MspaMode", "ProcessingNotice", "SaleOptOutNotice",
            "TargetedAdvertisingOptOutNotice", "SaleOptOut", "TargetedAdvertisingOptOut",
        ])
        if child { fields.append(one("KnownChildSensitiveDataConsents")) }
        fields.append(one("AdditionalDataProcessingConsent"))
        return fields
    }

    private static func mspaFirst(
        _ id: Int, _ name: String, child: Bool, subsection: Subsection, draft: Draft?
    ) -> GPPUSSectionLayout {
        GPPUSSectionLayout(
            id: id, name: name, versionField: "MspaVersion", fieldsByVersion: [1: mspaFirstCore(child: child)],
            subsection: subsection, draft: draft)
    }

    /// usin, usky and usri's optional subsection 1, Sensitive Data Consents: eight two-bit values, no type field.
    private static let sensitiveDataConsents = Subsection.untyped(
        name: "sensitive", fields: [list("SensitiveDataProcessing", 8)])

    /// The layout usin, usky and usri had in the drafts of June 2026 (iabgpp-es and iabgpp-java pull requests of
    /// 2026-06-06): `SensitiveDataProcessing` at the end of the core, a 40-bit core (seven characters where the
    /// published 24-bit core takes four), and a GPC subsection. Its first 24 bits are the published core's, so a
    /// string a consent platform wrote from the draft says the same about sale and targeted advertising; it is read
    /// as the draft rather than refused, so those opt-outs still deny.
    static let juneDraftName = "June 2026 draft"
    private static let juneDraft = Draft(
        name: juneDraftName, minimumCoreBits: 40,
        fields: mspaFirstCore(child: true) + [list("SensitiveDataProcessing", 8)], subsection: .gpc)
}
