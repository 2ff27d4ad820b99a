import FeatureGate
import FeatureGateConfig

/// `featuregate check FILE...`: validates files and reports in the format a reader or a CI service expects.
enum CheckCommand: ToolCommand {
    static let name = "check"
    static let usage =
        "featuregate check [--format text|json|github|sarif] [--json] [--lenient] [--airship] "
        + "[--same-features [--pair A=B]...] [--flag NAME=BIT]... FILE..."
    static let flags: Set<String> = ReadingOptions.flags.union(["--json", "--same-features"])
    static let valued: Set<String> = ReadingOptions.valued.union(["--format", "--pair"])

    static let help = """
        OVERVIEW: Validate FeatureGate config files.

        Reads XML, binary and old-style plists, JSON, and .properties files such as Airship Android's
        airshipconfig.properties; the format is judged from the content, and a file named *.properties is read as
        one. FILE '-' reads standard input. Every file is read as FeatureGate reads it (strictly, unless
        --lenient); --airship adds, for each file, the reading of the Airship SDK that loads it, and never takes
        a finding away.

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
                                      and "resetEnabledFeatures" are null; "line" and "column" (1-based) are null
                                      where unknown (a binary plist). A --same-features difference is an error
                                      among each file's diagnostics; "valid" stays the file's own verdict;
                              github  one GitHub Actions workflow command per problem (::error or ::warning
                                      with file, line and col), then 'featuregate check: N file(s), E error(s),
                                      W warning(s)';
                              sarif   one SARIF 2.1.0 log for all files, for code scanning.
          --json              The same as --format json.
          --lenient           Drop unknown feature names with a warning instead of failing.
          --airship           Also read each file as the Airship SDK that loads it does, and fail a file that
                              one of them would read as more enabled than it is written: Airship's iOS SDK
                              for plists and JSON (a value SDK 19 and later fail takeOff on, which SDK 16 to
                              18 read as every feature; a missing enabledFeatures, read as every feature),
                              Airship Android (20.x) for a .properties file (an unknown name or an empty
                              value, on which it keeps every feature). Where Android reads a file as less
                              enabled, it is a warning.
          --same-features     Exit 1 when the files enable different features, naming each feature that
                              differs and the files that enable it, on each file's enabledFeatures (an error
                              of kind differentFeatures in every format); a comparison that passes prints
                              'same features: NAMES (FILES)' (on standard error with json and sarif). Each
                              file's reading counts: FeatureGate's, or with --airship its platform's own
                              (Airship Android's for a .properties file, Airship iOS's for the others).
                              Without --pair it compares all the files given, two or more.
          --pair A=B          With --same-features: compare file A with file B. A file given that belongs to
                              a pair is compared with the other file of its pair, which is read even when not
                              given (a pre-commit hook is given only the staged files). Repeat for more
                              pairs. Files given that belong to no pair are checked, not compared.
          --flag NAME=BIT     Accept a flag your SDK registers (BIT in 16...31). Repeat for more flags.
          -h, --help          Show this help.

        EXIT STATUS: 0 every file is valid (warnings allowed), 1 a file is invalid or unreadable, or the features
        differ under --same-features, 2 usage error.
        """

    /// How `check` reports.
    enum OutputFormat: String {
        case text, json, github, sarif
    }

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments, airshipAddsReadings: true)
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
        let pairs = try (arguments.values["--pair"] ?? []).map { (declaration) throws(UsageError) in
            try FilePair(declaration)
        }
        let sameFeatures = arguments.flags.contains("--same-features")
        if !pairs.isEmpty && !sameFeatures {
            throw UsageError(message: "--pair declares files to compare: give it with --same-features")
        }
        if sameFeatures && pairs.isEmpty && arguments.operands.count < 2 {
            throw UsageError(
                message: "--same-features compares files: give two or more, or declare each pair with --pair A=B "
                    + "(then a file given alone is compared with the other file of its pair)")
        }

        let comparison = SameFeatures(operands: arguments.operands, pairs: pairs)
        let paths = sameFeatures ? comparison.files : arguments.operands
        var checked = paths.map { CheckedFile.check($0, with: options) }
        var notes: [String] = []
        if sameFeatures {
            notes = comparison.compare(&checked, catalog: options.reader.catalog, airship: options.airship)
        }

        let catalog = options.reader.catalog
        switch output {
        case .text:
            for file in checked {
                if file.diagnostics.isEmpty && file.valid { console.out("\(file.displayName): OK") }
                for diagnostic in file.diagnostics { console.out(diagnostic.description) }
            }
            for note in notes { console.out(note) }
        case .json:
            for file in checked { console.out(jsonLine(file, catalog: catalog)) }
            for note in notes { console.err(note) }
        case .github:
            for file in checked {
                for diagnostic in file.diagnostics {
                    console.out(GitHubAnnotation.command(for: diagnostic, file: file.path))
                }
            }
            for note in notes { console.out(note) }
            let diagnostics = checked.flatMap(\.diagnostics)
            let errors = diagnostics.filter { $0.severity == .error }.count
            console.out(
                "featuregate check: \(checked.count) file(s), \(errors) error(s), "
                    + "\(diagnostics.count - errors) warning(s)")
        case .sarif:
            console.out(SARIFLog.log(for: checked.map { ($0.path, $0.diagnostics) }))
            for note in notes { console.err(note) }
        }
        let failed = checked.contains { file in !file.valid || file.diagnostics.contains { $0.severity == .error } }
        return failed ? FeatureGateTool.failure : FeatureGateTool.success
    }

    static func jsonLine(_ file: CheckedFile, catalog: FeatureCatalog) -> JSONOutput {
        let diagnosticObjects = file.diagnostics.map { diagnostic in
            JSONOutput.object([
                ("severity", .string(diagnostic.severity.rawValue)), ("keyPath", .string(diagnostic.keyPath)),
                ("message", .string(diagnostic.message)), ("line", diagnostic.line.map(JSONOutput.int) ?? .null),
                ("column", diagnostic.column.map(JSONOutput.int) ?? .null),
            ])
        }
        let configuration = file.valid ? file.configuration : nil
        var members: [(String, JSONOutput)] = [
            ("file", .string(file.path)), ("valid", .bool(file.valid)),
            ("format", .stringOrNull(file.format?.rawValue)),
            (
                "enabledFeatures",
                configuration.map { .strings(catalog.names(of: $0.enabledFeatures).sorted()) } ?? .null
            ),
            ("resetEnabledFeatures", configuration.map { JSONOutput.bool($0.resetEnabledFeatures) } ?? .null),
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
