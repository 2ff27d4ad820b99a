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
        The format (XML plist, binary plist, JSON) is judged from the content. FILE '-' reads standard input.

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
        var allValid = true
        for file in arguments.operands {
            switch FeatureGateTool.load(file, with: options.reader) {
            case .success(let result):
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

    static func jsonLine(
        file: String, valid: Bool, format: ConfigFormat?, names: [String]?, reset: Bool?,
        diagnostics: [ConfigDiagnostic]
    ) -> String {
        let diagnosticObjects = diagnostics.map { diagnostic in
            "{\"severity\":\(json(diagnostic.severity.rawValue)),\"keyPath\":\(json(diagnostic.keyPath)),"
                + "\"message\":\(json(diagnostic.message))}"
        }
        let namesJSON = names.map { "[" + $0.map(json).joined(separator: ",") + "]" } ?? "null"
        return "{\"file\":\(json(file)),\"valid\":\(valid),\"format\":\(format.map { json($0.rawValue) } ?? "null"),"
            + "\"enabledFeatures\":\(namesJSON),\"resetEnabledFeatures\":\(reset.map { "\($0)" } ?? "null"),"
            + "\"diagnostics\":[\(diagnosticObjects.joined(separator: ","))]}"
    }

    /// A JSON string literal.
    static func json(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                // Beyond what JSON requires, every character a terminal could act on, so the line stays valid JSON
                // after the console's escaping (which then finds nothing to escape).
                if scalar.value < 0x20 || UntrustedText.needsEscaping(scalar) {
                    result += "\\u" + hex4(scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
