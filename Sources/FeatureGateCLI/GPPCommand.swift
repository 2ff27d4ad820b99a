import FeatureGate
import FeatureGateIAB

/// `featuregate gpp decode`: decode a Global Privacy Platform string, section by section.
///
/// Exit statuses: 0 decoded, 1 malformed (diagnostics say which section, field and bit), 2 a usage error.
enum GPPCommand {
    static let overview = """
        OVERVIEW: Decode IAB Global Privacy Platform (GPP) strings.

        USAGE: featuregate gpp <subcommand> [options]

        SUBCOMMANDS:
          decode    Decode a GPP string: the header and every US section, field by field.

        Run 'featuregate gpp decode --help' for its options.
        """

    static func run(_ arguments: [String], console: inout Console) -> Int32 {
        FeatureGateTool.runSubcommand(
            of: "gpp", overview: overview, [("decode", GPPDecodeCommand.self)], arguments, console: &console)
    }
}

/// `featuregate gpp decode [--json] [--] STRING`.
enum GPPDecodeCommand: ToolCommand {
    static let name = "gpp decode"
    static let usage = "featuregate gpp decode [--json] [--] STRING"
    static let flags: Set<String> = ["--json"]
    static let valued: Set<String> = []
    // base64url strings can start with '-': anything that is not exactly an option is the string.
    static let unknownOptionsAreOperands = true

    static let help = """
        OVERVIEW: Decode a GPP string (IABGPP_HDR_GppString): the header's section IDs, US National (usnat, 7),
        every US state section (usca 8 to usri 27) with its subsection (GPC; Sensitive Data Consents in usin,
        usky and usri), and US Privacy (uspv1, 6), field by field under the IAB's field names. usin, usky and
        usri strings in the June 2026 draft layout (a 40-bit core) are read as that draft, with a warning. Other
        sections (tcfeuv2, tcfcav1...) are listed in the header and not decoded: decode a TC string with
        'featuregate tcf decode'.

        USAGE: \(usage)

        ARGUMENTS:
          STRING              The GPP string. Any argument that is not exactly an option below is read as the
                              string; put '--' before it to end the options explicitly.

        OPTIONS:
          --json              Print one JSON object: {"header": {"version", "sectionIDs": [...]}, "sections":
                              {"usca": {FIELD: value, ...}, ...}, "diagnostics": [{"severity", "section",
                              "field", "message"}]}. Fields are named as the IAB spells them (SaleOptOut,
                              SensitiveDataProcessing, MspaVersion, SubsectionType, Gpc...); two-bit answers are
                              numbers, lists are arrays, Gpc is a boolean, uspv1's answers are "Y", "N" or "-".
                              A malformed section is left out of "sections" and has an error diagnostic; a
                              malformed header makes "header" null.
          -h, --help          Show this help.

        EXIT STATUS: 0 the string decoded (warnings included), 1 it is malformed, 2 usage error.
        """

    /// The API prefixes of the GPP sections that are not US sections, for diagnostics.
    static let otherSectionNames = [1: "tcfeuv1", 2: "tcfeuv2", 3: "gppheader", 4: "gpp", 5: "tcfcav1", 6: "uspv1"]

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        guard arguments.operands.count == 1, let string = arguments.operands.first else {
            throw UsageError(
                message: arguments.operands.isEmpty ? "no STRING given" : "decode takes one GPP STRING")
        }
        let reading = GPPReading(string)
        var diagnostics = reading.errors.map { error in
            Diagnostic(severity: .error, section: error.section, field: error.field, message: error.description)
        }
        for id in reading.sectionIDs
        where GPPString.USSection.name(ofSection: id) == nil && id != GPPString.usPrivacySectionID {
            diagnostics.append(
                Diagnostic(
                    severity: .warning, section: sectionName(id), field: nil,
                    message: "section \(id) is not decoded by FeatureGate; kept as text"))
        }
        for id in reading.sectionIDs {
            guard let section = reading.usSections[id], let draft = section.draftLayout else { continue }
            diagnostics.append(
                Diagnostic(
                    severity: .warning, section: section.name, field: nil,
                    message: "read in the \(draft) layout (a 40-bit core, a GPC subsection), not the published one"))
        }
        let sections = decodedSections(reading)
        if arguments.flags.contains("--json") {
            let header: JSONOutput =
                reading.version.map { version in
                    .object([("version", .int(version)), ("sectionIDs", TCFJSON.ids(reading.sectionIDs))])
                } ?? .null
            console.out(
                JSONOutput.object([
                    ("header", header),
                    ("sections", .object(sections.map { ($0.name, .object($0.fields)) })),
                    ("diagnostics", .array(diagnostics.map(\.json))),
                ]))
        } else {
            if let version = reading.version {
                console.out("version: \(version)")
                let ids = reading.sectionIDs.map { "\($0) (\(sectionName($0)))" }
                console.out("sectionIDs: \(ids.isEmpty ? "none" : ids.joined(separator: ", "))")
            }
            for section in sections {
                for (field, value) in section.fields { console.out("\(section.name).\(field): \(value.text)") }
            }
            for diagnostic in diagnostics {
                console.out("\(diagnostic.severity.rawValue): \(diagnostic.section): \(diagnostic.message)")
            }
        }
        return reading.errors.isEmpty ? FeatureGateTool.success : FeatureGateTool.failure
    }

    static func sectionName(_ id: Int) -> String {
        GPPString.USSection.name(ofSection: id) ?? otherSectionNames[id] ?? "\(id)"
    }

    /// The sections that decoded, in the header's order, each as its fields.
    static func decodedSections(_ reading: GPPReading) -> [(name: String, fields: [(String, JSONOutput)])] {
        reading.sectionIDs.compactMap { id in
            if let section = reading.usSections[id] {
                return (section.name, section.fields.map { ($0.name, json($0.value)) })
            }
            if id == GPPString.usPrivacySectionID, let usPrivacy = reading.usPrivacy {
                let letters = Array(usPrivacy.description.dropFirst()).map { JSONOutput.string(String($0)) }
                return (
                    "uspv1",
                    [
                        ("Version", .int(usPrivacy.version)), ("Notice", letters[0]), ("OptOutSale", letters[1]),
                        ("LspaCovered", letters[2]),
                    ]
                )
            }
            return nil
        }
    }

    static func json(_ value: GPPString.USSection.Value) -> JSONOutput {
        switch value {
        case .int(let number): .int(number)
        case .list(let numbers): TCFJSON.ids(numbers)
        case .bool(let flag): .bool(flag)
        }
    }

    struct Diagnostic {
        var severity: DiagnosticSeverity
        var section: String
        var field: String?
        var message: String

        var json: JSONOutput {
            .object([
                ("severity", .string(severity.rawValue)), ("section", .string(section)),
                ("field", JSONOutput.stringOrNull(field)), ("message", .string(message)),
            ])
        }
    }
}
