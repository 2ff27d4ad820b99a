extension GPPString {
    /// One decoded US section of a GPP string (US National, 7, and every state section, 8 to 27), field by field.
    ///
    /// Every section is read from one table of the IAB's field lists, so each carries its own fields under their IAB
    /// names (``fields``, ``subscript(_:)``): a California section has `SharingOptOut` and no
    /// `TargetedAdvertisingOptOut`, the sections from 2026 on (usmd 24, usin 25, usky 26, usri 27) start with
    /// `MspaVersion` and have one `MspaMode`, and usin, usky and usri carry `SensitiveDataProcessing` in an optional
    /// Sensitive Data Consents subsection and have no GPC subsection. The opt-outs FeatureGate acts on are also typed
    /// (``saleOptOut``, ``sharingOptOut``, ``targetedAdvertisingOptOut``, ``globalPrivacyControl``); a field the section
    /// does not have is `nil`.
    ///
    /// Decoding is strict where FeatureGate acts: an unknown version, a truncated field, an opt-out of 3 or a
    /// malformed GPC subsection throws a ``GPPString/DecodingError`` naming the section, field and bit offset.
    public struct USSection: Sendable, Hashable {
        /// One decoded value.
        public enum Value: Sendable, Hashable, CustomStringConvertible {
            /// A number: a version, or a two-bit answer (0 not applicable, 1 yes / opted out, 2 no).
            case int(Int)
            /// Two-bit answers, one per category (`SensitiveDataProcessing`, `KnownChildSensitiveDataConsents`).
            case list([Int])
            /// One bit (`Gpc`).
            case bool(Bool)

            /// `1`, `[2, 1, 0]` or `true`.
            public var description: String {
                switch self {
                case .int(let value): "\(value)"
                case .list(let values): "[" + values.map(String.init).joined(separator: ", ") + "]"
                case .bool(let value): "\(value)"
                }
            }
        }

        /// One field: its name as the IAB specification spells it, and its value.
        public struct Field: Sendable, Hashable {
            /// The field's IAB name, e.g. `SaleOptOut`.
            public var name: String
            /// Its value.
            public var value: Value
        }

        /// The section's ID (7 to 27).
        public var id: Int
        /// The section's API prefix, e.g. `usca`.
        public var name: String
        /// The section's version (`Version`, or `MspaVersion` from section 24 on).
        public var version: Int
        /// Every field in the order the string holds them, the version first; a subsection's fields last when the
        /// string carries it (the GPC subsection's `SubsectionType` and `Gpc`; usin, usky and usri's Sensitive Data
        /// Consents subsection's `SensitiveDataProcessing`).
        public var fields: [Field]
        /// The name of the draft layout the section was read in (`June 2026 draft`: usin, usky or usri with a 40-bit
        /// core), or `nil` when it is in the layout the IAB published.
        public var draftLayout: String?

        /// The US section IDs FeatureGate decodes: US National (7) and every state section (8 to 27).
        public static let sectionIDs: [Int] = GPPUSSectionLayout.byID.keys.sorted()

        /// The API prefix of US section `id` (`usnat`, `usca`…), or `nil` when FeatureGate does not decode it.
        public static func name(ofSection id: Int) -> String? { GPPUSSectionLayout.byID[id]?.name }

        /// The value of the field named `name` (as the IAB spells it), or `nil` when the section has no such field.
        public subscript(_ name: String) -> Value? {
            fields.first { $0.name == name }?.value
        }

        /// `SaleOptOut`, when the section has it.
        public var saleOptOut: GPPString.USNationalSection.OptOut? { optOut("SaleOptOut") }
        /// `SharingOptOut`, when the section has it (US National and California).
        public var sharingOptOut: GPPString.USNationalSection.OptOut? { optOut("SharingOptOut") }
        /// `TargetedAdvertisingOptOut`, when the section has it (every section but California).
        public var targetedAdvertisingOptOut: GPPString.USNationalSection.OptOut? {
            optOut("TargetedAdvertisingOptOut")
        }
        /// The GPC subsection's `Gpc`, when the string carries the subsection.
        public var globalPrivacyControl: Bool? {
            if case .bool(let value)? = self[GPPUSSectionLayout.gpcField] { return value }
            return nil
        }

        private func optOut(_ name: String) -> GPPString.USNationalSection.OptOut? {
            if case .int(let value)? = self[name] { return GPPString.USNationalSection.OptOut(rawValue: value) }
            return nil
        }

        /// Decodes the text of US section `sectionID`: the core, then (in sections that have one) an optional
        /// `.`-separated subsection: the GPC subsection, or in usin, usky and usri the Sensitive Data Consents
        /// subsection.
        ///
        /// usin, usky and usri strings whose core is 40 bits or longer are in the June 2026 draft layout
        /// (`SensitiveDataProcessing` in the core, a GPC subsection): they are read as that draft, and
        /// ``draftLayout`` names it. The draft's first 24 bits are the published core's, so its opt-outs say the same.
        ///
        /// - Throws: ``GPPString/DecodingError`` naming the section (`usca`, or `usca.gpc` / `usin.sensitive` for its
        ///   subsection), the field and the bit offset: a section FeatureGate does not decode, an unknown version, a
        ///   truncated field, a `SaleOptOut`, `SharingOptOut` or `TargetedAdvertisingOptOut` of 3, a subsection in a
        ///   section that has none, or a subsection that is not the section's (or comes twice). Bits after the last
        ///   field (padding to a whole character) are ignored.
        public init(sectionID: Int, _ text: String) throws(GPPString.DecodingError) {
            guard let layout = GPPUSSectionLayout.byID[sectionID] else {
                throw GPPString.DecodingError(
                    section: "\(sectionID)", field: "SectionId", bitOffset: 0, found: "section \(sectionID)",
                    expected: "a US section, 7 to 27")
            }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            var core = try GPPBitReader(parts[0], section: layout.name)
            let versionOffset = core.offset
            let version = try core.int(6, layout.versionField)
            guard var coreFields = layout.fieldsByVersion[version] else {
                let known = layout.fieldsByVersion.keys.sorted().map(String.init).joined(separator: " or ")
                throw core.invalid(layout.versionField, at: versionOffset, found: "\(version)", expected: known)
            }
            var subsectionLayout = layout.subsection
            var draftLayout: String?
            if let draft = layout.draft, core.bits.bitCount >= draft.minimumCoreBits {
                coreFields = draft.fields
                subsectionLayout = draft.subsection
                draftLayout = draft.name
            }
            var fields = [Field(name: layout.versionField, value: .int(version))]
            fields.reserveCapacity(coreFields.count + 3)
            try Self.read(coreFields, from: &core, into: &fields)
            for (index, part) in parts.dropFirst().enumerated() {
                switch subsectionLayout {
                case .untyped(let name, let subsectionFields)?:
                    var subsection = try GPPBitReader(part, section: layout.name + "." + name)
                    guard index == 0 else {
                        throw subsection.invalid(
                            subsectionFields[0].name, at: 0, found: "a second subsection",
                            expected: "one subsection (\(layout.name)'s \(name) subsection), once")
                    }
                    try Self.read(subsectionFields, from: &subsection, into: &fields)
                case .gpc?, nil:
                    var subsection = try GPPBitReader(part, section: layout.name + ".gpc")
                    let typeOffset = subsection.offset
                    let type = try subsection.int(2, GPPUSSectionLayout.subsectionTypeField)
                    let hasGPC = subsectionLayout != nil
                    let seen = fields.contains { $0.name == GPPUSSectionLayout.gpcField }
                    guard hasGPC, type == 1, !seen else {
                        throw subsection.invalid(
                            GPPUSSectionLayout.subsectionTypeField, at: typeOffset,
                            found: hasGPC ? (seen ? "a second subsection" : "\(type)") : "a subsection",
                            expected: hasGPC
                                ? "1 (the GPC subsection), once"
                                : "no subsection (\(layout.name) has no GPC subsection)")
                    }
                    let gpc = try subsection.int(1, GPPUSSectionLayout.gpcField) == 1
                    fields.append(Field(name: GPPUSSectionLayout.subsectionTypeField, value: .int(type)))
                    fields.append(Field(name: GPPUSSectionLayout.gpcField, value: .bool(gpc)))
                }
            }
            self.id = sectionID
            self.name = layout.name
            self.version = version
            self.fields = fields
            self.draftLayout = draftLayout
        }

        /// Reads `layoutFields` in order, each two bits (a list: `count` times two bits).
        private static func read(
            _ layoutFields: [GPPUSSectionLayout.Field], from reader: inout GPPBitReader, into fields: inout [Field]
        ) throws(GPPString.DecodingError) {
            for field in layoutFields {
                if let count = field.count {
                    var values: [Int] = []
                    values.reserveCapacity(count)
                    for _ in 0..<count { values.append(try reader.int(2, field.name)) }
                    fields.append(Field(name: field.name, value: .list(values)))
                } else {
                    let start = reader.offset
                    let value = try reader.int(2, field.name)
                    // The opt-outs decide consent: a value the specification does not define fails closed.
                    if value == 3, optOutFields.contains(field.name) {
                        throw reader.invalid(field.name, at: start, found: "3", expected: "0, 1 or 2")
                    }
                    fields.append(Field(name: field.name, value: .int(value)))
                }
            }
        }

        private static let optOutFields: Set<String> = ["SaleOptOut", "SharingOptOut", "TargetedAdvertisingOptOut"]
    }
}
