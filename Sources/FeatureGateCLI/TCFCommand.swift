import FeatureGate
import FeatureGateConfig
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
        FeatureGateTool.runSubcommand(
            of: "tcf", overview: overview, [("decode", TCFDecodeCommand.self), ("apply", TCFApplyCommand.self)],
            arguments, console: &console)
    }
}

/// The TCF values the `tcf` subcommands print, as JSON and as text.
enum TCFJSON {
    static func ids<IDs: Sequence<Int>>(_ ids: IDs) -> JSONOutput { .array(ids.map(JSONOutput.int)) }

    /// `[[first,last],…]`: as long as the string that encoded the ranges, however many IDs they cover.
    static func ranges(_ set: TCString.IDRanges) -> JSONOutput {
        .array(set.ranges.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })
    }

    /// ISO 8601 in UTC, with tenths of a second only when the value has them (TC string dates are deciseconds).
    static func date(_ date: Date) -> String {
        let deciseconds = Int((date.timeIntervalSince1970 * 10).rounded())
        let whole = Date(timeIntervalSince1970: Double(deciseconds / 10))
        var text = whole.formatted(.iso8601)
        if deciseconds % 10 != 0 { text = String(text.dropLast()) + ".\(deciseconds % 10)Z" }
        return text
    }
}

/// `featuregate tcf decode [--json] [--] TCSTRING`.
enum TCFDecodeCommand: ToolCommand {
    static let name = "tcf decode"
    static let usage = "featuregate tcf decode [--json] [--] TCSTRING"
    static let flags: Set<String> = ["--json"]
    static let valued: Set<String> = []
    // base64url strings can start with '-': anything that is not exactly an option is the string.
    static let unknownOptionsAreOperands = true

    static let help = """
        OVERVIEW: Decode a TCF v2 TC string (IABTCF_TCString): the core segment and any disclosed-vendors,
        allowed-vendors and publisher-TC segments, base64url with or without padding.

        USAGE: \(usage)

        ARGUMENTS:
          TCSTRING            The TC string. Any argument that is not exactly an option below is read as the
                              string, even one starting with '-' (base64url allows it); put '--' before the
                              string to end the options explicitly: featuregate tcf decode --json -- -BQSbk...

        OPTIONS:
          --json              Print one JSON object: version, created, lastUpdated (ISO 8601, UTC), cmpId,
                              cmpVersion, consentScreen, consentLanguage, vendorListVersion, tcfPolicyVersion,
                              isServiceSpecific, useNonStandardTexts, purposeOneTreatment, publisherCC,
                              specialFeatureOptIns, purposeConsents, purposeLegitimateInterests, vendorConsents,
                              vendorLegitimateInterests (ascending IDs), publisherRestrictions
                              ([{"purpose", "type", "vendors"}], type notAllowed, requireConsent,
                              requireLegitimateInterest or undefined (type 3, read as notAllowed), vendors as
                              ranges [[first, last], ...], a single vendor as [id, id]), disclosedVendors
                              (ranges, as for restrictions), allowedVendors, publisherPurposeConsents, publisherPurposeLegitimateInterests,
                              customPurposeConsents, customPurposeLegitimateInterests (empty when a segment is
                              absent) and diagnostics ([{"severity", "segment", "field", "bitOffset", "message"}]).
                              For a malformed string every other value is null.
          -h, --help          Show this help.

        EXIT STATUS: 0 the string is valid (warnings included), 1 it is malformed or unsupported (TCF v1, or
        IsServiceSpecific 0 under TCF policy version 4 or later, say) or invalid under TCF v2.3 (created on or
        after 2026-03-01 without a disclosed-vendors segment: its fields are shown, with an error diagnostic),
        2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let string = try arguments.onlyOperand("TCSTRING", tooMany: tooManyOperands(arguments))
        let asJSON = arguments.flags.contains("--json")
        do {
            // Decoded for inspection: a string TCF v2.3 calls invalid still shows its fields, beside the error.
            let tc = try TCString(inspecting: string)
            let violation = tc.disclosedVendorsViolation
            if asJSON {
                console.out(json(tc, error: violation))
            } else {
                for line in text(tc) { console.out(line) }
                if let violation { console.out("error: \(violation)") }
            }
            return violation == nil ? FeatureGateTool.success : FeatureGateTool.failure
        } catch {
            if asJSON {
                console.out(json(error))
            } else {
                console.out("error: \(error)")
            }
            if string.hasPrefix("-") {
                console.err(
                    "note: '\(string.prefix(20))' was read as the TC string: it is not an option (--json, --help)")
            }
            return FeatureGateTool.failure
        }
    }

    /// Says which operand looks like a mistyped option, since unknown options are operands here.
    private static func tooManyOperands(_ arguments: ParsedArguments) -> String {
        let known = flags.union(["--help"]).sorted()
        for operand in arguments.operands where operand.hasPrefix("-") {
            if let option = NameMatching.closest(to: operand, among: known) {
                return "decode takes one TCSTRING; '\(operand)' is not an option, did you mean '\(option)'?"
            }
        }
        return "decode takes one TCSTRING"
    }

    static let fieldNames = [
        "version", "created", "lastUpdated", "cmpId", "cmpVersion", "consentScreen", "consentLanguage",
        "vendorListVersion", "tcfPolicyVersion", "isServiceSpecific", "useNonStandardTexts", "purposeOneTreatment",
        "publisherCC", "specialFeatureOptIns", "purposeConsents", "purposeLegitimateInterests", "vendorConsents",
        "vendorLegitimateInterests", "publisherRestrictions", "disclosedVendors", "allowedVendors",
        "publisherPurposeConsents", "publisherPurposeLegitimateInterests", "customPurposeConsents",
        "customPurposeLegitimateInterests", "diagnostics",
    ]

    static func json(_ tc: TCString, error: TCString.DecodingError? = nil) -> JSONOutput {
        let restrictions = tc.publisherRestrictions.map {
            JSONOutput.object([
                ("purpose", .int($0.purpose)), ("type", .string($0.type.rawValue)),
                ("vendors", TCFJSON.ranges($0.vendors)),
            ])
        }
        var diagnostics = tc.warnings.map {
            JSONOutput.object([
                ("severity", .string(DiagnosticSeverity.warning.rawValue)), ("segment", .string($0.segment.rawValue)),
                ("field", .null), ("bitOffset", .null), ("message", .string($0.description)),
            ])
        }
        // A rule about the string as a whole (TCF v2.3's disclosed vendors): an error at no bit.
        if let error {
            diagnostics.insert(
                .object([
                    ("severity", .string(DiagnosticSeverity.error.rawValue)),
                    ("segment", .string(error.segment.rawValue)), ("field", .string(error.field)),
                    ("bitOffset", .null), ("message", .string(error.description)),
                ]), at: 0)
        }
        let values: [JSONOutput] = [
            .int(tc.version), .string(TCFJSON.date(tc.created)), .string(TCFJSON.date(tc.lastUpdated)),
            .int(tc.cmpID), .int(tc.cmpVersion), .int(tc.consentScreen), .string(tc.consentLanguage),
            .int(tc.vendorListVersion), .int(tc.tcfPolicyVersion), .bool(tc.isServiceSpecific),
            .bool(tc.useNonStandardTexts), .bool(tc.purposeOneTreatment), .string(tc.publisherCountryCode),
            TCFJSON.ids(tc.specialFeatureOptIns), TCFJSON.ids(tc.purposeConsents),
            TCFJSON.ids(tc.purposeLegitimateInterests), TCFJSON.ids(tc.vendorConsents),
            TCFJSON.ids(tc.vendorLegitimateInterests), .array(restrictions),
            TCFJSON.ranges(TCString.IDRanges(tc.disclosedVendors ?? [])),
            TCFJSON.ids(tc.allowedVendors ?? []),
            TCFJSON.ids(tc.publisherTC?.purposeConsents ?? []),
            TCFJSON.ids(tc.publisherTC?.purposeLegitimateInterests ?? []),
            TCFJSON.ids(tc.publisherTC?.customPurposeConsents ?? []),
            TCFJSON.ids(tc.publisherTC?.customPurposeLegitimateInterests ?? []),
            .array(diagnostics),
        ]
        precondition(values.count == fieldNames.count, "a decode field without its name, or a name without its value")
        return .object(Array(zip(fieldNames, values)))
    }

    static func json(_ error: TCString.DecodingError) -> JSONOutput {
        let diagnostic = JSONOutput.object([
            ("severity", .string(DiagnosticSeverity.error.rawValue)), ("segment", .string(error.segment.rawValue)),
            ("field", .string(error.field)), ("bitOffset", .int(error.bitOffset)),
            ("message", .string(error.description)),
        ])
        let values = fieldNames.dropLast().map { _ in JSONOutput.null } + [.array([diagnostic])]
        return .object(Array(zip(fieldNames, values)))
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
                    + "for vendors \(restriction.vendors.isEmpty ? "none" : restriction.vendors.rangeList)")
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

/// `featuregate tcf apply --keys FILE [--json] [--vendor ID]`.
enum TCFApplyCommand: ToolCommand {
    static let name = "tcf apply"
    static let usage = "featuregate tcf apply --keys FILE [--json] [--vendor ID] [--share-with ID]..."
    static let flags: Set<String> = ["--json"]
    static let valued: Set<String> = ["--keys", "--vendor", "--share-with"]

    static let help = """
        OVERVIEW: Read a CMP's keys as an app would and show the consent they give.

        FILE is a JSON object of the keys a CMP writes: IABTCF_gdprApplies (a number), and as strings
        IABTCF_TCString, IABTCF_PurposeConsents, IABTCF_PurposeLegitimateInterests, IABTCF_PublisherConsent,
        IABTCF_PublisherLegitimateInterests, IABTCF_VendorConsents, IABTCF_VendorLegitimateInterests,
        IABUSPrivacy_String, IABGPP_HDR_GppString and IABGPP_GppSID. Malformed signals fail closed: they grant
        nothing, and the result is still printed.

        USAGE: \(usage)

        OPTIONS:
          --keys FILE         The key file ('-' for standard input).
          --json              Print one JSON object: {"categories": {CATEGORY: "granted"|"denied"|"unknown"},
                              "features": [config names enabled in a default-off app under the default consent
                              policy], "consentMode": {"analytics_storage", "ad_storage", "ad_user_data",
                              "ad_personalization"}, "diagnostics": [{"severity", "key", "message"}]}.
          --vendor ID         Read TCF for an SDK with IAB vendor ID ID (purpose keys and vendor bits) instead
                              of the app's own processing (publisher keys).
          --share-with ID     A vendor the app shares personal data with; with any, TCF decides
                              thirdPartySharing. Repeat for more vendors.
          -h, --help          Show this help.

        EXIT STATUS: 0 every signal was read, 1 a signal (or the file) is malformed, 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        guard arguments.operands.isEmpty else {
            throw UsageError(message: "unexpected argument '\(arguments.operands[0])'; give the file with --keys")
        }
        guard let path = try arguments.value("--keys") else { throw UsageError(message: "no --keys FILE given") }
        var subject = TCFSubject.publisher
        if let vendor = try arguments.value("--vendor") {
            guard let id = Int(vendor), (1...65535).contains(id) else {
                throw UsageError(message: "--vendor \(vendor): expected a vendor ID in 1...65535")
            }
            subject = .vendor(id)
        }
        var sharing: Set<Int> = []
        for vendor in arguments.values["--share-with"] ?? [] {
            guard let id = Int(vendor), (1...65535).contains(id) else {
                throw UsageError(message: "--share-with \(vendor): expected a vendor ID in 1...65535")
            }
            sharing.insert(id)
        }
        var diagnostics: [CMPDiagnostic] = []
        let keys = readKeys(path, diagnostics: &diagnostics)
        let consent = CMPConsent(keys: keys, mapping: .default(sharingWith: sharing), subject: subject)
        diagnostics += consent.diagnostics
        let categories = (ConsentPolicy.default.categories + consent.decisions.keys).reduce(into: [ConsentCategory]()) {
            if !$0.contains($1) { $0.append($1) }
        }.sorted()
        let features = FeatureCatalog.builtIn.names(of: consent.enabledFeatures()).sorted()
        let modeKeys = ["analytics_storage", "ad_storage", "ad_user_data", "ad_personalization"]
        let parameters = consent.consentMode.parameters
        if arguments.flags.contains("--json") {
            let categoryJSON = JSONOutput.object(
                categories.map { ($0.rawValue, .string(consent.status(for: $0).rawValue)) })
            let modeJSON = JSONOutput.object(modeKeys.map { ($0, .string(parameters[$0] ?? "denied")) })
            let diagnosticsJSON = diagnostics.map {
                JSONOutput.object([
                    ("severity", .string($0.severity.rawValue)), ("key", .string($0.key)),
                    ("message", .string($0.message)),
                ])
            }
            console.out(
                JSONOutput.object([
                    ("categories", categoryJSON), ("features", .strings(features)), ("consentMode", modeJSON),
                    ("diagnostics", .array(diagnosticsJSON)),
                ]))
        } else {
            for category in categories { console.out("\(category): \(consent.status(for: category).rawValue)") }
            console.out("features: \(features.isEmpty ? "none" : features.joined(separator: ", "))")
            for key in modeKeys { console.out("\(key): \(parameters[key] ?? "denied")") }
            for diagnostic in diagnostics { console.out(diagnostic.description) }
        }
        return diagnostics.contains { $0.severity == .error } ? FeatureGateTool.failure : FeatureGateTool.success
    }

    /// The key file as CMP values; a file that cannot be read, or a value of the wrong kind, is an error
    /// diagnostic and contributes nothing.
    static func readKeys(_ path: String, diagnostics: inout [CMPDiagnostic]) -> [String: CMPValue] {
        // A CMP writes a few kilobytes of keys; the limit keeps a huge or endless input from exhausting memory.
        let maximumKeyFileSize = 1024 * 1024
        let data: Data
        do {
            if path == "-" {
                data = try FileHandle.standardInput.read(upToCount: maximumKeyFileSize + 1) ?? Data()
                if data.count > maximumKeyFileSize {
                    throw FileStoreError(
                        path: "standard input", operation: .read, problem: .tooLarge(limit: maximumKeyFileSize))
                }
            } else {
                data = try AtomicFile.readNamedFile(atPath: path, limit: maximumKeyFileSize)
            }
        } catch {
            diagnostics.append(
                CMPDiagnostic(severity: .error, key: path, message: "cannot read the key file (\(error))"))
            return [:]
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            diagnostics.append(
                CMPDiagnostic(severity: .error, key: path, message: "not a JSON object of CMP keys; nothing read"))
            return [:]
        }
        var keys: [String: CMPValue] = [:]
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            guard CMPKey.all.contains(key) else {
                diagnostics.append(
                    CMPDiagnostic(severity: .warning, key: key, message: "not a key FeatureGate reads; ignored"))
                continue
            }
            do {
                keys[key] = try CMPValue(foundationValue: value)
            } catch {
                diagnostics.append(
                    CMPDiagnostic(severity: .error, key: key, message: "\(error); ignored, failing closed"))
            }
        }
        return keys
    }
}
