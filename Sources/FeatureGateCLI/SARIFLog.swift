import FeatureGateConfig

/// `featuregate check --format sarif`: one SARIF 2.1.0 log for every file checked, with the fields GitHub code
/// scanning requires (`rules` with descriptions and help, and per result `ruleId`, `level`, `message.text`, a
/// physical location and `partialFingerprints.primaryLocationLineHash`). Columns count Unicode scalars, as the
/// diagnostics do (`columnKind: unicodeCodePoints`).
enum SARIFLog {
    static let schema = "https://json.schemastore.org/sarif-2.1.0.json"

    /// The log for `files`: each path as given on the command line with its diagnostics.
    static func log(for files: [(path: String, diagnostics: [ConfigDiagnostic])]) -> JSONOutput {
        let kinds = ConfigDiagnostic.Kind.allCases
        let rules = kinds.map { kind in
            let text = ruleText(kind)
            return JSONOutput.object([
                ("id", .string(kind.rawValue)), ("name", .string(ruleName(kind))),
                ("shortDescription", .object([("text", .string(text.short))])),
                ("fullDescription", .object([("text", .string(text.full))])),
                ("help", .object([("text", .string(text.help))])),
            ])
        }
        var results: [JSONOutput] = []
        for (path, diagnostics) in files {
            for diagnostic in diagnostics {
                var region: [(String, JSONOutput)] = [("startLine", .int(diagnostic.line ?? 1))]
                if diagnostic.line != nil, let column = diagnostic.column {
                    region.append(("startColumn", .int(column)))
                }
                results.append(
                    .object([
                        ("ruleId", .string(diagnostic.kind.rawValue)),
                        ("ruleIndex", .int(kinds.firstIndex(of: diagnostic.kind) ?? 0)),
                        ("level", .string(diagnostic.severity == .error ? "error" : "warning")),
                        ("message", .object([("text", .string(diagnostic.placelessText))])),
                        (
                            "locations",
                            .array([
                                .object([
                                    (
                                        "physicalLocation",
                                        .object([
                                            ("artifactLocation", .object([("uri", .string(path))])),
                                            ("region", .object(region)),
                                        ])
                                    )
                                ])
                            ])
                        ),
                        (
                            "partialFingerprints",
                            .object([("primaryLocationLineHash", .string(fingerprint(diagnostic, path: path)))])
                        ),
                    ]))
            }
        }
        return .object([
            ("$schema", .string(schema)), ("version", .string("2.1.0")),
            (
                "runs",
                .array([
                    .object([
                        (
                            "tool",
                            .object([
                                (
                                    "driver",
                                    .object([
                                        ("name", .string("featuregate")),
                                        ("rules", .array(rules)),
                                    ])
                                )
                            ])
                        ),
                        ("results", .array(results)),
                        ("columnKind", .string("unicodeCodePoints")),
                    ])
                ])
            ),
        ])
    }

    /// A stable fingerprint of what a result is about, not of where: the file, the rule, the key path and the
    /// message without its place, so a line moved by an edit above keeps its alert. FNV-1a, 64 bits, in hex, with
    /// `:1` as GitHub's own line hashes end.
    static func fingerprint(_ diagnostic: ConfigDiagnostic, path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in [path, diagnostic.kind.rawValue, diagnostic.keyPath, diagnostic.unplacedMessage]
            .joined(separator: "\u{0}").utf8
        {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + ":1"
    }

    /// `UnknownName` for `unknownName`: the rule's name, as SARIF viewers show it.
    static func ruleName(_ kind: ConfigDiagnostic.Kind) -> String {
        kind.rawValue.prefix(1).uppercased() + kind.rawValue.dropFirst()
    }

    /// What each kind of problem means and how to fix it.
    static func ruleText(_ kind: ConfigDiagnostic.Kind) -> (short: String, full: String, help: String) {
        switch kind {
        case .unreadableFile:
            (
                "Unreadable file", "The file could not be opened or read, or is not a regular file.",
                "Check the path and the file's permissions."
            )
        case .resourceNotFound:
            (
                "Resource not found", "The bundle has no resource with the requested name.",
                "Add the config file to the target's resources."
            )
        case .fileTooLarge:
            (
                "File too large", "The file is larger than a config may be (1 MiB by default).",
                "Point the check at the config file itself."
            )
        case .emptyFile:
            (
                "Empty file", "The file is empty or holds only whitespace, so it enables nothing.",
                "Write enabledFeatures (and resetEnabledFeatures if needed) into the file."
            )
        case .invalidEncoding:
            (
                "Invalid encoding", "The text is not in the encoding its format requires (UTF-8 for plists and JSON).",
                "Save the file as UTF-8."
            )
        case .unrecognizedFormat:
            (
                "Unrecognized format",
                "The content is not an XML, binary or old-style plist, JSON, or a .properties file.",
                "Save the config as a plist, JSON, or airshipconfig.properties."
            )
        case .syntaxError:
            (
                "Syntax error", "The file is malformed or truncated; nothing in it is read.",
                "Fix the syntax at the line and column given."
            )
        case .keyWithoutValue:
            ("Key without a value", "A dictionary key is followed by no value.", "Give the key a value or remove it.")
        case .nestingTooDeep:
            (
                "Nesting too deep", "Containers are nested deeper than a config may nest them.",
                "Flatten the document."
            )
        case .tooManyValues:
            (
                "Too many values", "The document holds more values than a config may hold.",
                "Point the check at the config file itself."
            )
        case .notADictionary:
            (
                "Not a dictionary", "The top-level value is not a dictionary.",
                "Make the top level a dictionary with an enabledFeatures key."
            )
        case .missingKey:
            (
                "Missing enabledFeatures",
                "enabledFeatures is missing: Airship then enables every feature, FeatureGate refuses to guess.",
                "Write enabledFeatures with the features to enable: [\"all\"] to keep Airship's default, or a list."
            )
        case .misspelledKey:
            (
                "Misspelled key", "A key looks like a misspelling of enabledFeatures or resetEnabledFeatures.",
                "Spell the key exactly: enabledFeatures, resetEnabledFeatures."
            )
        case .duplicateKey:
            (
                "Duplicate key", "enabledFeatures or resetEnabledFeatures appears twice.",
                "Write the key once, so it is clear which value counts."
            )
        case .wrongType:
            (
                "Wrong type", "A value has the wrong type (a boolean where names were expected, say).",
                "Write the value with the type the message expects."
            )
        case .negativeBitmask:
            (
                "Negative bitmask", "enabledFeatures is a negative integer.",
                "Write the names of the features instead of a bitmask."
            )
        case .bitmaskOutOfRange:
            (
                "Bitmask out of range", "enabledFeatures is an integer too large for 64 bits.",
                "Write the names of the features instead of a bitmask."
            )
        case .unknownName:
            (
                "Unknown feature name", "A name in enabledFeatures is not a feature of the catalog, all or none.",
                "Use one of the names the message lists; Airship Android keeps every feature on an unknown name."
            )
        case .tooManyNames:
            (
                "Too many names", "enabledFeatures lists more names than a config may list.",
                "List each feature once."
            )
        case .retiredName:
            ("Retired name", "chat or location: flags Airship retired; they enable nothing.", "Remove the name.")
        case .emptyName:
            ("Empty name", "An empty name in enabledFeatures; it enables nothing.", "Remove the empty item.")
        case .noneWithOtherNames:
            (
                "none with other names", "none next to other names turns nothing off: the other names still count.",
                "Write none alone to enable nothing, or remove it."
            )
        case .unknownBits:
            (
                "Unknown bits", "The bitmask has bits that are not flags of the catalog; they are dropped.",
                "Write the names of the features instead of a bitmask."
            )
        case .defaultedToAll:
            (
                "Defaulted to every feature",
                "enabledFeatures is missing, and Airship's reading enables every feature.",
                "Write enabledFeatures explicitly."
            )
        case .unconvertibleValue:
            (
                "Unconvertible value", "A value the output format of a conversion cannot hold.",
                "Convert to a format that can hold the value, or remove it."
            )
        case .airshipAnalyticsSwitchedOff:
            (
                "Airship analytics switched off",
                "isAnalyticsEnabled or analyticsEnabled is false: Airship records no analytics events then, whatever "
                    + "enabledFeatures says.",
                "Leave analytics out of enabledFeatures instead."
            )
        case .rejectedByAirship:
            (
                "Rejected by Airship",
                "A value Airship's iOS SDK does not accept: SDK 19 and later fail takeOff on it.",
                "Write enabledFeatures as an array of known names."
            )
        case .readDifferentlyByAirshipAndroid:
            (
                "Read differently by Airship Android",
                "Airship Android reads the file differently from what it appears to say: an unknown name keeps every "
                    + "feature, dataCollectionOptInEnabled = true turns the default to none.",
                "Use only names Airship Android knows, and write enabledFeatures explicitly."
            )
        case .unknownKey:
            ("Unknown key", "A key inside consentPolicy that no version reads.", "Remove or correct the key.")
        case .invalidValue:
            (
                "Invalid value", "A value of the right type outside what is accepted.",
                "Write a value in the range the message gives."
            )
        case .resetDiscardsChoices:
            (
                "Reset discards choices",
                "resetEnabledFeatures is true: every launch discards the choices the app and the user made, keeping only "
                    + "their refusals (consent refusals, and the flags revoke-all turned off).",
                "Ship resetEnabledFeatures: true in one release only, then remove it."
            )
        case .differentFeatures:
            (
                "Different features",
                "Files checked with --same-features (an app's AirshipConfig.plist and its airshipconfig.properties, "
                    + "say) enable different features: one platform would do what the other does not.",
                "Enable the same features in every file of the pair, or check them separately if they should differ."
            )
        }
    }
}
