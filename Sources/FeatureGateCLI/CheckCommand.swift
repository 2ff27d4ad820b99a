import FeatureGate
import FeatureGateConfig

/// `featuregate check FILE...`: validates files, one line per diagnostic, or one JSON object per file.
enum CheckCommand: ToolCommand {
    static let name = "check"
    static let usage = "featuregate check [--json] [--lenient | --airship] [--flag NAME=BIT]... FILE..."
    static let flags: Set<String> = ReadingOptions.flags.union(["--json"])
    static let valued: Set<String> = ReadingOptions.valued

    static let help = """
        OVERVIEW: Validate FeatureGate config files.

        Prints one line per problem, 'FILE: error|warning: KEYPATH: message', and nothing for a clean file.
        The format (XML, binary or old-style plist, JSON) is judged from the content. FILE '-' reads standard
        input. With --airship, check answers "would an Airship app accept this file?": a value Airship's iOS SDK
        rejects (an unknown or retired name, a string or an integer where an array of names belongs) is an error
        saying which SDK versions fail takeOff on it and which enable every feature instead.

        USAGE: \(usage)

        OPTIONS:
          --json              Print one JSON object per file and line instead:
                              {"file", "valid", "format", "enabledFeatures", "resetEnabledFeatures",
                              "diagnostics": [{"severity", "keyPath", "message"}]}. For an invalid file,
                              "enabledFeatures" and "resetEnabledFeatures" are null.
        \(ReadingOptions.help)
          -h, --help          Show this help.

        EXIT STATUS: 0 every file is valid (warnings allowed), 1 a file is invalid or unreadable, 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments)
        guard !arguments.operands.isEmpty else { throw UsageError(message: "no FILE given") }
        let asJSON = arguments.flags.contains("--json")
        let asAirship = options.reader.mode == .airshipCompatible
        var allValid = true
        for file in arguments.operands {
            switch FeatureGateTool.loadDocument(file, with: options.reader) {
            case .success(let document):
                let result = document.result
                let rejections =
                    asAirship ? AirshipAcceptance.diagnostics(for: document.root, source: result.source) : []
                guard rejections.isEmpty else {
                    allValid = false
                    // The lenient reading's warnings about the values Airship rejects would only repeat them.
                    let warnings = result.warnings.filter { warning in
                        !rejections.contains { $0.keyPath == warning.keyPath && $0.line == warning.line }
                    }
                    let diagnostics = inDocumentOrder(warnings + rejections)
                    if asJSON {
                        console.out(
                            jsonLine(
                                file: file, valid: false, format: result.format, names: nil, reset: nil,
                                diagnostics: diagnostics))
                    } else {
                        for diagnostic in diagnostics { console.out(diagnostic.description) }
                    }
                    continue
                }
                if asJSON {
                    let names = options.reader.catalog.names(of: result.configuration.enabledFeatures).sorted()
                    console.out(
                        jsonLine(
                            file: file, valid: true, format: result.format, names: names,
                            reset: result.configuration.resetEnabledFeatures, diagnostics: result.warnings))
                } else {
                    for warning in result.warnings { console.out(warning.description) }
                }
            case .failure(let error):
                allValid = false
                if asJSON {
                    console.out(
                        jsonLine(
                            file: file, valid: false, format: error.format, names: nil, reset: nil,
                            diagnostics: error.diagnostics))
                } else {
                    for diagnostic in error.diagnostics { console.out(diagnostic.description) }
                }
            }
        }
        return allValid ? FeatureGateTool.success : FeatureGateTool.failure
    }

    /// Sorted by line where lines are known, keeping the order of diagnostics on the same line.
    private static func inDocumentOrder(_ diagnostics: [ConfigDiagnostic]) -> [ConfigDiagnostic] {
        diagnostics.enumerated()
            .sorted { ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset) }
            .map(\.element)
    }

    static func jsonLine(
        file: String, valid: Bool, format: ConfigFormat?, names: [String]?, reset: Bool?,
        diagnostics: [ConfigDiagnostic]
    ) -> JSONOutput {
        let diagnosticObjects = diagnostics.map { diagnostic in
            JSONOutput.object([
                ("severity", .string(diagnostic.severity.rawValue)), ("keyPath", .string(diagnostic.keyPath)),
                ("message", .string(diagnostic.message)),
            ])
        }
        return .object([
            ("file", .string(file)), ("valid", .bool(valid)), ("format", .stringOrNull(format?.rawValue)),
            ("enabledFeatures", names.map(JSONOutput.strings) ?? .null),
            ("resetEnabledFeatures", reset.map(JSONOutput.bool) ?? .null),
            ("diagnostics", .array(diagnosticObjects)),
        ])
    }
}
