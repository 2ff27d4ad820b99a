import FeatureGate
import FeatureGateConfig

/// `featuregate check FILE...`: validates files and reports in the format a reader or a CI service expects.
enum CheckCommand: ToolCommand {
    static let name = "check"
    static let usage =
        "featuregate check [--format text|json|github|sarif] [--json] [--same-features] [--lenient | --airship] "
        + "[--flag NAME=BIT]... FILE..."
    static let flags: Set<String> = ReadingOptions.flags.union(["--json", "--same-features"])
    static let valued: Set<String> = ReadingOptions.valued.union(["--format"])

    static let help = """
        OVERVIEW: Validate FeatureGate config files.

        The format (XML, binary or old-style plist, JSON, or a .properties file such as Airship Android's
        airshipconfig.properties) is judged from the content; a file named *.properties is read as one. FILE '-'
        reads standard input. With --airship, check answers "would an Airship app accept this file?": a value
        Airship's iOS SDK rejects is an error saying which SDK versions fail takeOff on it and which enable every
        feature instead, and a .properties file gets a warning wherever Airship Android (20.x) reads it
        differently from what it appears to say.

        USAGE: \(usage)

        OPTIONS:
          --format FORMAT     How to report (default text):
                              text    one line per problem, 'FILE: error|warning: KEYPATH: message', and
                                      'FILE: OK' for a file with no problem;
                              json    one object per file and line: {"file", "valid", "format",
                                      "enabledFeatures", "resetEnabledFeatures", "diagnostics": [{"severity",
                                      "keyPath", "message", "line", "column"}]}, and for a .properties file
                                      "airshipAndroid": {"enabledFeatures", "resetEnabledFeatures"} (what Airship
                                      Android enables on a first launch). For an invalid file, "enabledFeatures"
                                      and "resetEnabledFeatures" are null; "line" and "column" are null where
                                      unknown;
                              github  one GitHub Actions workflow command per problem (::error or ::warning
                                      with file, line and col), then 'featuregate check: N file(s), E error(s),
                                      W warning(s)';
                              sarif   one SARIF 2.1.0 log for all files, for code scanning.
          --json              The same as --format json.
          --same-features     With two files or more (an app's AirshipConfig.plist and its
                              airshipconfig.properties): exit 1 when their enabled features differ, naming each
                              feature that differs and the files that enable it. Each file's reading counts:
                              FeatureGate's (strict unless --lenient), or with --airship each platform's own.
        \(ReadingOptions.help)
          -h, --help          Show this help.

        EXIT STATUS: 0 every file is valid (warnings allowed), 1 a file is invalid or unreadable, or the features
        differ under --same-features, 2 usage error.
        """

    /// How `check` reports.
    enum OutputFormat: String {
        case text, json, github, sarif
    }

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments)
        guard !arguments.operands.isEmpty else { throw UsageError(message: "no FILE given") }
        var output = OutputFormat.text
        if let given = try arguments.value("--format") {
            guard let format = OutputFormat(rawValue: given) else {
                throw UsageError(message: "--format \(given): expected text, json, github or sarif")
            }
            output = format
        }
        if arguments.flags.contains("--json") {
            guard arguments.values["--format"] == nil || output == .json else {
                throw UsageError(message: "--json is --format json: it conflicts with --format \(output.rawValue)")
            }
            output = .json
        }
        let sameFeatures = arguments.flags.contains("--same-features")
        if sameFeatures && arguments.operands.count < 2 {
            throw UsageError(message: "--same-features compares files: give two or more")
        }

        let checked = arguments.operands.map { check($0, with: options.reader) }
        let catalog = options.reader.catalog
        switch output {
        case .text:
            for file in checked {
                if file.diagnostics.isEmpty && file.valid { console.out("\(file.displayName): OK") }
                for diagnostic in file.diagnostics { console.out(diagnostic.description) }
            }
        case .json:
            for file in checked { console.out(jsonLine(file, catalog: catalog)) }
        case .github:
            for file in checked {
                for diagnostic in file.diagnostics {
                    console.out(GitHubAnnotation.command(for: diagnostic, file: file.path))
                }
            }
            let diagnostics = checked.flatMap(\.diagnostics)
            let errors = diagnostics.filter { $0.severity == .error }.count
            console.out(
                "featuregate check: \(checked.count) file(s), \(errors) error(s), "
                    + "\(diagnostics.count - errors) warning(s)")
        case .sarif:
            console.out(SARIFLog.log(for: checked.map { ($0.path, $0.diagnostics) }))
        }
        var status = checked.allSatisfy(\.valid) ? FeatureGateTool.success : FeatureGateTool.failure
        if sameFeatures {
            let differences = featureDifferences(checked, catalog: catalog)
            for line in differences {
                switch output {
                case .text: console.out(line)
                case .github: console.out("::error title=featuregate check::" + GitHubAnnotation.escapedMessage(line))
                case .json, .sarif: console.err(line)
                }
            }
            if !differences.isEmpty { status = FeatureGateTool.failure }
        }
        return status
    }

    /// One file's outcome: what `check` reports about it in every format.
    struct CheckedFile {
        /// The operand as given on the command line.
        var path: String
        var valid: Bool
        var format: ConfigFormat?
        /// Errors and warnings in document order.
        var diagnostics: [ConfigDiagnostic]
        /// The reading's features and reset flag, for a valid file.
        var enabledFeatures: Feature?
        var resetEnabledFeatures: Bool?
        /// What Airship Android reads, for a `.properties` file.
        var airshipAndroid: AirshipAndroidReading?
        /// Whether the platform readings count for `--same-features`.
        var comparesPlatformReadings: Bool

        /// The name a line of text output gives the file: the path, or `<stdin>` for `-`.
        var displayName: String { path == "-" ? "<stdin>" : UntrustedText.escapedPath(path) }

        /// The features `--same-features` compares: FeatureGate's reading, or with `--airship` Airship Android's for
        /// a `.properties` file.
        var comparedFeatures: Feature? {
            if comparesPlatformReadings, let airshipAndroid { return airshipAndroid.enabledFeatures }
            return enabledFeatures
        }
    }

    static func check(_ file: String, with reader: ConfigReader) -> CheckedFile {
        let asAirship = reader.mode == .airshipCompatible
        let (loaded, bytes) = FeatureGateTool.loadDocumentAndBytes(file, with: reader)
        var checked = CheckedFile(
            path: file, valid: false, format: nil, diagnostics: [], comparesPlatformReadings: asAirship)
        switch loaded {
        case .success(let document):
            let result = document.result
            checked.format = result.format
            checked.diagnostics = result.warnings
            // Airship's iOS SDK's rules are about plists and JSON; Airship Android's are checked below.
            let rejections =
                asAirship && result.format != .properties
                ? AirshipAcceptance.diagnostics(for: document.root, source: result.source) : []
            if rejections.isEmpty {
                checked.valid = true
                checked.enabledFeatures = result.configuration.enabledFeatures
                checked.resetEnabledFeatures = result.configuration.resetEnabledFeatures
            } else {
                // The lenient reading's warnings about the values Airship rejects would only repeat them.
                let warnings = result.warnings.filter { warning in
                    !rejections.contains { $0.keyPath == warning.keyPath && $0.line == warning.line }
                }
                checked.diagnostics = warnings + rejections
            }
        case .failure(let error):
            checked.format = error.format
            checked.diagnostics = error.diagnostics
        }
        if checked.format == .properties, let bytes {
            let reading = AirshipAndroidReading(bytes: bytes)
            checked.airshipAndroid = reading
            if asAirship {
                let source = file == "-" ? "<stdin>" : checked.diagnostics.first?.source ?? file
                checked.diagnostics += reading.notes.map { note in
                    ConfigDiagnostic(
                        severity: .warning, kind: .readDifferentlyByAirshipAndroid, source: source,
                        keyPath: note.keyPath, line: note.line, column: note.column, found: nil,
                        expected: nil, message: (note.line.map { "line \($0): " } ?? "") + note.message)
                }
            }
        }
        checked.diagnostics = inDocumentOrder(checked.diagnostics)
        return checked
    }

    /// Sorted by line where lines are known, keeping the order of diagnostics on the same line.
    private static func inDocumentOrder(_ diagnostics: [ConfigDiagnostic]) -> [ConfigDiagnostic] {
        diagnostics.enumerated()
            .sorted { ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset) }
            .map(\.element)
    }

    /// For `--same-features`: one line per feature that some compared files enable and others do not.
    static func featureDifferences(_ files: [CheckedFile], catalog: FeatureCatalog) -> [String] {
        let compared = files.compactMap { file in file.comparedFeatures.map { (file.displayName, $0) } }
        guard compared.count >= 2 else { return [] }
        let union = compared.reduce(Feature()) { $0.union($1.1) }
        let common = compared.reduce(union) { $0.intersection($1.1) }
        return union.subtracting(common).flags.map { flag in
            let name = catalog.name(of: flag) ?? "bit\(flag.rawValue.trailingZeroBitCount)"
            let enabling = compared.filter { $0.1.contains(flag) }.map(\.0)
            let others = compared.filter { !$0.1.contains(flag) }.map(\.0)
            return "featuregate check: --same-features: \(name) is enabled by "
                + enabling.joined(separator: ", ") + "; not by " + others.joined(separator: ", ")
        }
    }

    static func jsonLine(_ file: CheckedFile, catalog: FeatureCatalog) -> JSONOutput {
        let diagnosticObjects = file.diagnostics.map { diagnostic in
            JSONOutput.object([
                ("severity", .string(diagnostic.severity.rawValue)), ("keyPath", .string(diagnostic.keyPath)),
                ("message", .string(diagnostic.message)), ("line", diagnostic.line.map(JSONOutput.int) ?? .null),
                ("column", diagnostic.column.map(JSONOutput.int) ?? .null),
            ])
        }
        var members: [(String, JSONOutput)] = [
            ("file", .string(file.path)), ("valid", .bool(file.valid)),
            ("format", .stringOrNull(file.format?.rawValue)),
            ("enabledFeatures", file.enabledFeatures.map { .strings(catalog.names(of: $0).sorted()) } ?? .null),
            ("resetEnabledFeatures", file.resetEnabledFeatures.map(JSONOutput.bool) ?? .null),
            ("diagnostics", .array(diagnosticObjects)),
        ]
        if let android = file.airshipAndroid {
            members.append(
                (
                    "airshipAndroid",
                    .object([
                        ("enabledFeatures", .strings(catalog.names(of: android.enabledFeatures).sorted())),
                        ("resetEnabledFeatures", .bool(android.resetEnabledFeatures)),
                    ])
                ))
        }
        return .object(members)
    }
}
