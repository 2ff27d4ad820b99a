/// One decoded US section of a GPP string (US National, 7, and every state section, 8 to 27), field by field.
///
/// Every section is read from one table of the IAB's field lists, so each carries its own fields under their IAB
/// names (``fields``, ``subscript(_:)``): a California section has `SharingOptOut` and no
/// `TargetedAdvertisingOptOut`, the sections from 2026 on (usmd 24, usin 25, usky 26, usri 27) start with
/// `MspaVersion` and have one `MspaMode`. The opt-outs FeatureGate acts on are also typed (``saleOptOut``,
/// ``sharingOptOut``, ``targetedAdvertisingOptOut``, ``globalPrivacyControl``); a field the section does not have
/// is `nil`.
///
/// Decoding is strict where FeatureGate acts: an unknown version, a truncated field, an opt-out of 3 or a
/// malformed GPC subsection throws a `GPPStringError` naming the section, field and bit offset.
package struct GPPUSSection: Sendable, Hashable {
    /// One decoded value.
    package enum Value: Sendable, Hashable, CustomStringConvertible {
        /// A number: a version, or a two-bit answer (0 not applicable, 1 yes / opted out, 2 no).
        case int(Int)
        /// Two-bit answers, one per category (`SensitiveDataProcessing`, `KnownChildSensitiveDataConsents`).
        case list([Int])
        /// One bit (`Gpc`).
        case bool(Bool)

        /// `1`, `[2, 1, 0]` or `true`.
        package var description: String {
            switch self {
            case .int(let value): "\(value)"
            case .list(let values): "[" + values.map(String.init).joined(separator: ", ") + "]"
            case .bool(let value): "\(value)"
            }
        }
    }

    /// One field: its name as the IAB specification spells it, and its value.
    package struct Field: Sendable, Hashable {
        /// The field's IAB name, e.g. `SaleOptOut`.
        package var name: String
        /// Its value.
        package var value: Value
    }

    /// The section's ID (7 to 27).
    package var id: Int
    /// The section's API prefix, e.g. `usca`.
    package var name: String
    /// The section's version (`Version`, or `MspaVersion` from section 24 on).
    package var version: Int
    /// Every field in the order the string holds them, the version first; the GPC subsection's `SubsectionType`
    /// and `Gpc` last when the string carries it.
    package var fields: [Field]

    /// The US section IDs FeatureGate decodes: US National (7) and every state section (8 to 27).
    package static let sectionIDs: [Int] = GPPUSSectionLayout.byID.keys.sorted()

    /// The API prefix of US section `id` (`usnat`, `usca`…), or `nil` when FeatureGate does not decode it.
    package static func name(ofSection id: Int) -> String? { GPPUSSectionLayout.byID[id]?.name }

    /// The value of the field named `name` (as the IAB spells it), or `nil` when the section has no such field.
    package subscript(_ name: String) -> Value? {
        fields.first { $0.name == name }?.value
    }

    /// `SaleOptOut`, when the section has it.
    package var saleOptOut: USNationalSection.OptOut? { optOut("SaleOptOut") }
    /// `SharingOptOut`, when the section has it (US National and California).
    package var sharingOptOut: USNationalSection.OptOut? { optOut("SharingOptOut") }
    /// `TargetedAdvertisingOptOut`, when the section has it (every section but California).
    package var targetedAdvertisingOptOut: USNationalSection.OptOut? { optOut("TargetedAdvertisingOptOut") }
    /// The GPC subsection's `Gpc`, when the string carries the subsection.
    package var globalPrivacyControl: Bool? {
        if case .bool(let value)? = self[GPPUSSectionLayout.gpcField] { return value }
        return nil
    }

    private func optOut(_ name: String) -> USNationalSection.OptOut? {
        if case .int(let value)? = self[name] { return USNationalSection.OptOut(rawValue: value) }
        return nil
    }

    /// Decodes the text of US section `sectionID`: the core, then (in sections that have one) an optional
    /// `.`-separated GPC subsection.
    ///
    /// - Throws: `GPPStringError` naming the section (`usca`, or `usca.gpc` for its subsection), the field and
    ///   the bit offset: a section FeatureGate does not decode, an unknown version, a truncated field, a
    ///   `SaleOptOut`, `SharingOptOut` or `TargetedAdvertisingOptOut` of 3, a subsection in a section that has
    ///   none, or a subsection that is not the GPC subsection (or comes twice). Bits after the last field (padding
    ///   to a whole character) are ignored.
    package init(sectionID: Int, _ text: String) throws(GPPStringError) {
        guard let layout = GPPUSSectionLayout.byID[sectionID] else {
            throw GPPStringError(
                section: "\(sectionID)", field: "SectionId", bitOffset: 0, found: "section \(sectionID)",
                expected: "a US section, 7 to 27")
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var core = try GPPBitReader(parts[0], section: layout.name)
        let versionOffset = core.offset
        let version = try core.int(6, layout.versionField)
        guard let layoutFields = layout.fieldsByVersion[version] else {
            let known = layout.fieldsByVersion.keys.sorted().map(String.init).joined(separator: " or ")
            throw core.invalid(layout.versionField, at: versionOffset, found: "\(version)", expected: known)
        }
        var fields = [Field(name: layout.versionField, value: .int(version))]
        fields.reserveCapacity(layoutFields.count + 3)
        for field in layoutFields {
            if let count = field.count {
                var values: [Int] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(try core.int(2, field.name)) }
                fields.append(Field(name: field.name, value: .list(values)))
            } else {
                let start = core.offset
                let value = try core.int(2, field.name)
                // The opt-outs decide consent: a value the specification does not define fails closed.
                if value == 3, Self.optOutFields.contains(field.name) {
                    throw core.invalid(field.name, at: start, found: "3", expected: "0, 1 or 2")
                }
                fields.append(Field(name: field.name, value: .int(value)))
            }
        }
        let subsectionName = layout.name + ".gpc"
        for part in parts.dropFirst() {
            var subsection = try GPPBitReader(part, section: subsectionName)
            let typeOffset = subsection.offset
            let type = try subsection.int(2, GPPUSSectionLayout.subsectionTypeField)
            let seen = fields.contains { $0.name == GPPUSSectionLayout.gpcField }
            guard layout.hasGPCSubsection, type == 1, !seen else {
                throw subsection.invalid(
                    GPPUSSectionLayout.subsectionTypeField, at: typeOffset,
                    found: layout.hasGPCSubsection ? (seen ? "a second subsection" : "\(type)") : "a subsection",
                    expected: layout.hasGPCSubsection
                        ? "1 (the GPC subsection), once" : "no subsection (\(layout.name) has no GPC subsection)")
            }
            let gpc = try subsection.int(1, GPPUSSectionLayout.gpcField) == 1
            fields.append(Field(name: GPPUSSectionLayout.subsectionTypeField, value: .int(type)))
            fields.append(Field(name: GPPUSSectionLayout.gpcField, value: .bool(gpc)))
        }
        self.id = sectionID
        self.name = layout.name
        self.version = version
        self.fields = fields
    }

    private static let optOutFields: Set<String> = ["SaleOptOut", "SharingOptOut", "TargetedAdvertisingOptOut"]
}
