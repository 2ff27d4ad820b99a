import FeatureGate
import FeatureGateIAB
import Foundation

/// `featuregate tcf decode|apply`: decode a consent string, or apply a CMP's keys as a default-off app would.
///
/// Exit statuses: 0 valid, 1 a string or key file is malformed (diagnostics say where), 2 a usage error.
enum TCFCommand {
    static let overview = """
        OVERVIEW: Decode IAB consent signals and show what they allow.

        USAGE: featuregate tcf <subcommand> [options]

        SUBCOMMANDS:
          decode    Decode a TCF v2 TC string: every field of every segment.
          apply     Read a CMP's keys (IABTCF_*, IABUSPrivacy_String, IABGPP_*) and show the consent they give.

        Run 'featuregate tcf <subcommand> --help' for a subcommand's options.
        """

    static func run(_ arguments: [String], console: inout Console) -> Int32 {
        guard let subcommand = arguments.first else {
            console.err(overview)
            return FeatureGateTool.usageFailure
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "decode": return run(TCFDecodeCommand.self, rest, console: &console)
        case "--help", "-h", "help":
            console.out(overview)
            return FeatureGateTool.success
        default:
            console.err("featuregate tcf: error: unknown subcommand '\(subcommand)'; expected 'decode' or 'apply'")
            console.err("Run 'featuregate tcf --help' for the subcommands.")
            return FeatureGateTool.usageFailure
        }
    }

    private static func run<Command: ToolCommand>(
        _ command: Command.Type, _ arguments: [String], console: inout Console
    ) -> Int32 {
        do {
            let parsed = try ParsedArguments(
                arguments, flags: Command.flags.union(["--help", "-h"]), valued: Command.valued)
            if parsed.flags.contains("--help") || parsed.flags.contains("-h") {
                console.out(Command.help)
                return FeatureGateTool.success
            }
            return try Command.run(parsed, console: &console)
        } catch {
            console.err("featuregate \(Command.name): error: \(error.message)")
            console.err("Usage: \(Command.usage)")
            console.err("Run 'featuregate \(Command.name) --help' for more.")
            return FeatureGateTool.usageFailure
        }
    }
}

/// JSON building blocks shared by the `tcf` subcommands.
enum TCFJSON {
    static func string(_ text: String) -> String { CheckCommand.json(text) }

    static func ids<IDs: Sequence<Int>>(_ ids: IDs) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    /// ISO 8601 in UTC, with tenths of a second only when the value has them (TC string dates are deciseconds).
    static func date(_ date: Date) -> String {
        let deciseconds = Int((date.timeIntervalSince1970 * 10).rounded())
        let whole = Date(timeIntervalSince1970: Double(deciseconds / 10))
        var text = whole.formatted(.iso8601)
        if deciseconds % 10 != 0 { text = String(text.dropLast()) + ".\(deciseconds % 10)Z" }
        return text
    }

    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }
}

/// `featuregate tcf decode TCSTRING [--json]`.
enum TCFDecodeCommand: ToolCommand {
    static let name = "tcf decode"
    static let usage = "featuregate tcf decode [--json] TCSTRING"
    static let flags: Set<String> = ["--json"]
    static let valued: Set<String> = []

    static let help = """
        OVERVIEW: Decode a TCF v2 TC string (IABTCF_TCString): the core segment and any disclosed-vendors,
        allowed-vendors and publisher-TC segments, base64url with or without padding.

        USAGE: \(usage)

        OPTIONS:
          --json              Print one JSON object: version, created, lastUpdated (ISO 8601, UTC), cmpId,
                              cmpVersion, consentScreen, consentLanguage, vendorListVersion, tcfPolicyVersion,
                              isServiceSpecific, useNonStandardTexts, purposeOneTreatment, publisherCC,
                              specialFeatureOptIns, purposeConsents, purposeLegitimateInterests, vendorConsents,
                              vendorLegitimateInterests (ascending IDs), publisherRestrictions
                              ([{"purpose", "type", "vendors"}]), disclosedVendors, allowedVendors,
                              publisherPurposeConsents, publisherPurposeLegitimateInterests,
                              customPurposeConsents, customPurposeLegitimateInterests (empty when a segment is
                              absent) and diagnostics ([{"severity", "segment", "field", "bitOffset", "message"}]).
                              For a malformed string every other value is null.
          -h, --help          Show this help.

        EXIT STATUS: 0 the string is valid, 1 it is malformed or unsupported (TCF v1, say), 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        guard arguments.operands.count == 1, let string = arguments.operands.first else {
            throw UsageError(message: arguments.operands.isEmpty ? "no TCSTRING given" : "decode takes one TCSTRING")
        }
        let asJSON = arguments.flags.contains("--json")
        do {
            let tc = try TCString(string)
            if asJSON {
                console.out(json(tc))
            } else {
                for line in text(tc) { console.out(line) }
            }
            return FeatureGateTool.success
        } catch {
            if asJSON {
                console.out(json(error))
            } else {
                console.out("error: \(error)")
            }
            return FeatureGateTool.failure
        }
    }

    static let fieldNames = [
        "version", "created", "lastUpdated", "cmpId", "cmpVersion", "consentScreen", "consentLanguage",
        "vendorListVersion", "tcfPolicyVersion", "isServiceSpecific", "useNonStandardTexts", "purposeOneTreatment",
        "publisherCC", "specialFeatureOptIns", "purposeConsents", "purposeLegitimateInterests", "vendorConsents",
        "vendorLegitimateInterests", "publisherRestrictions", "disclosedVendors", "allowedVendors",
        "publisherPurposeConsents", "publisherPurposeLegitimateInterests", "customPurposeConsents",
        "customPurposeLegitimateInterests", "diagnostics",
    ]

    static func json(_ tc: TCString) -> String {
        let restrictions = tc.publisherRestrictions.map {
            TCFJSON.object([
                ("purpose", "\($0.purpose)"), ("type", TCFJSON.string($0.type.rawValue)),
                ("vendors", TCFJSON.ids($0.vendors)),
            ])
        }
        let diagnostics = tc.warnings.map {
            TCFJSON.object([
                ("severity", TCFJSON.string("warning")), ("segment", TCFJSON.string("core")), ("field", "null"),
                ("bitOffset", "null"), ("message", TCFJSON.string($0.description)),
            ])
        }
        let values: [String] = [
            "\(tc.version)", TCFJSON.string(TCFJSON.date(tc.created)), TCFJSON.string(TCFJSON.date(tc.lastUpdated)),
            "\(tc.cmpID)", "\(tc.cmpVersion)", "\(tc.consentScreen)", TCFJSON.string(tc.consentLanguage),
            "\(tc.vendorListVersion)", "\(tc.tcfPolicyVersion)", "\(tc.isServiceSpecific)",
            "\(tc.useNonStandardTexts)", "\(tc.purposeOneTreatment)", TCFJSON.string(tc.publisherCountryCode),
            TCFJSON.ids(tc.specialFeatureOptIns), TCFJSON.ids(tc.purposeConsents),
            TCFJSON.ids(tc.purposeLegitimateInterests), TCFJSON.ids(tc.vendorConsents),
            TCFJSON.ids(tc.vendorLegitimateInterests), "[" + restrictions.joined(separator: ",") + "]",
            TCFJSON.ids(tc.disclosedVendors ?? []), TCFJSON.ids(tc.allowedVendors ?? []),
            TCFJSON.ids(tc.publisherTC?.purposeConsents ?? []),
            TCFJSON.ids(tc.publisherTC?.purposeLegitimateInterests ?? []),
            TCFJSON.ids(tc.publisherTC?.customPurposeConsents ?? []),
            TCFJSON.ids(tc.publisherTC?.customPurposeLegitimateInterests ?? []),
            "[" + diagnostics.joined(separator: ",") + "]",
        ]
        return TCFJSON.object(Array(zip(fieldNames, values)))
    }

    static func json(_ error: TCStringError) -> String {
        let diagnostic = TCFJSON.object([
            ("severity", TCFJSON.string("error")), ("segment", TCFJSON.string(error.segment.rawValue)),
            ("field", TCFJSON.string(error.field)), ("bitOffset", "\(error.bitOffset)"),
            ("message", TCFJSON.string(error.description)),
        ])
        let values = fieldNames.dropLast().map { _ in "null" } + ["[" + diagnostic + "]"]
        return TCFJSON.object(Array(zip(fieldNames, values)))
    }

    static func text(_ tc: TCString) -> [String] {
        func list<IDs: Sequence<Int>>(_ ids: IDs?) -> String {
            guard let ids else { return "(segment absent)" }
            let text = ids.map(String.init).joined(separator: ", ")
            return text.isEmpty ? "none" : text
        }
        var lines = [
            "version: \(tc.version)",
            "created: \(TCFJSON.date(tc.created))",
            "lastUpdated: \(TCFJSON.date(tc.lastUpdated))",
            "cmpId: \(tc.cmpID)",
            "cmpVersion: \(tc.cmpVersion)",
            "consentScreen: \(tc.consentScreen)",
            "consentLanguage: \(tc.consentLanguage)",
            "vendorListVersion: \(tc.vendorListVersion)",
            "tcfPolicyVersion: \(tc.tcfPolicyVersion)",
            "isServiceSpecific: \(tc.isServiceSpecific)",
            "useNonStandardTexts: \(tc.useNonStandardTexts)",
            "purposeOneTreatment: \(tc.purposeOneTreatment)",
            "publisherCC: \(tc.publisherCountryCode)",
            "specialFeatureOptIns: \(list(tc.specialFeatureOptIns))",
            "purposeConsents: \(list(tc.purposeConsents))",
            "purposeLegitimateInterests: \(list(tc.purposeLegitimateInterests))",
            "vendorConsents: \(list(tc.vendorConsents))",
            "vendorLegitimateInterests: \(list(tc.vendorLegitimateInterests))",
        ]
        if tc.publisherRestrictions.isEmpty { lines.append("publisherRestrictions: none") }
        for restriction in tc.publisherRestrictions {
            lines.append(
                "publisherRestriction: purpose \(restriction.purpose) \(restriction.type.rawValue) "
                    + "for vendors \(list(restriction.vendors))")
        }
        lines += [
            "disclosedVendors: \(list(tc.disclosedVendors))",
            "allowedVendors: \(list(tc.allowedVendors))",
            "publisherPurposeConsents: \(list(tc.publisherTC?.purposeConsents))",
            "publisherPurposeLegitimateInterests: \(list(tc.publisherTC?.purposeLegitimateInterests))",
            "customPurposeConsents: \(list(tc.publisherTC?.customPurposeConsents))",
            "customPurposeLegitimateInterests: \(list(tc.publisherTC?.customPurposeLegitimateInterests))",
        ]
        lines += tc.warnings.map { "warning: \($0)" }
        return lines
    }
}
