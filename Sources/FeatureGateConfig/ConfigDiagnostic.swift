import FeatureGate

/// One finding about a config: an error that makes the file invalid, or a warning about something dropped.
///
/// Every diagnostic says where (``source``, ``keyPath`` and, for the text formats, ``line``), what was ``found`` and
/// what was ``expected``. ``description`` is the line `featuregate check` prints:
///
/// ```
/// Config.plist: error: enabledFeatures[2]: line 9: unknown feature name "anlytics"; did you mean "analytics"?
/// ```
public struct ConfigDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// Whether the diagnostic makes the config invalid: the severity every FeatureGate module's diagnostics share.
    @available(*, deprecated, renamed: "DiagnosticSeverity")
    public typealias Severity = DiagnosticSeverity

    /// What kind of problem this is. The same kind may be an error in one mode and a warning in another.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The file could not be opened or read (it does not exist, is a directory, has no permission…).
        case unreadableFile
        /// The bundle has no resource with the requested name.
        case resourceNotFound
        /// The file is larger than ``ConfigLimits/maximumFileSize``.
        case fileTooLarge
        /// The file is empty or holds only whitespace.
        case emptyFile
        /// The text is not UTF-8 (UTF-16, invalid bytes, or a declared encoding other than UTF-8).
        case invalidEncoding
        /// The content is not an XML plist, a binary plist or JSON.
        case unrecognizedFormat
        /// The file is malformed or truncated; the message gives the line and column in the text formats.
        case syntaxError
        /// A dictionary key is followed by no value (another key, the end of the dictionary or of the file); the
        /// diagnostic names the key and gives its line.
        case keyWithoutValue
        /// Containers are nested deeper than ``ConfigLimits/maximumDepth``.
        case nestingTooDeep
        /// The document holds more values than ``ConfigLimits/maximumValueCount``.
        case tooManyValues
        /// The top-level value is not a dictionary (a JSON array, say).
        case notADictionary
        /// `enabledFeatures` is missing (an error, except in Airship-compatible mode).
        case missingKey
        /// A key looks like a misspelling of `enabledFeatures` or `resetEnabledFeatures`.
        case misspelledKey
        /// `enabledFeatures` or `resetEnabledFeatures` appears twice.
        case duplicateKey
        /// A value has the wrong type (a boolean where names were expected, say).
        case wrongType
        /// `enabledFeatures` is a negative integer.
        case negativeBitmask
        /// `enabledFeatures` is an integer too large for 64 bits.
        case bitmaskOutOfRange
        /// A name that is not a flag of the catalog, `all` or `none` (an error in strict mode).
        case unknownName
        /// `enabledFeatures` lists more names than ``ConfigLimits/maximumNameCount``.
        case tooManyNames
        /// `chat` or `location`, flags Airship retired; always a warning, and never enables anything.
        case retiredName
        /// An empty name (an empty string, or an empty item of a comma-separated list); a warning.
        case emptyName
        /// `none` next to other names, which stay enabled; a warning.
        case noneWithOtherNames
        /// An integer bitmask with bits that are not flags of the catalog; they are dropped, with a warning.
        case unknownBits
        /// Airship-compatible mode enabled every flag because `enabledFeatures` is missing; a warning. `featuregate
        /// check --airship` reports the same about Airship's iOS SDK as an error.
        case defaultedToAll
        /// A value the output format of a conversion cannot hold (a date or data in JSON, a null in a plist); the
        /// conversion writes nothing.
        case unconvertibleValue
        /// `isAnalyticsEnabled` (or the older `analyticsEnabled`) is false: Airship records no analytics events
        /// then, whatever `enabledFeatures` says, and FeatureGate does not read the key; a warning.
        case airshipAnalyticsSwitchedOff
        /// A value Airship's iOS SDK does not accept: SDK 19 and later fail `takeOff`, earlier SDKs enable every
        /// feature. Only `featuregate check --airship` reports it, as an error.
        case rejectedByAirship
        /// Airship Android reads an `airshipconfig.properties` file differently from what it appears to say (an
        /// unknown name keeps every feature; `dataCollectionOptInEnabled = true` turns the default to none). Only
        /// `featuregate check --airship` reports it: as an error where Airship Android enables more than the file
        /// does as written, as a warning otherwise.
        case readDifferentlyByAirshipAndroid
        /// A key inside `consentPolicy` that no version reads (an error in strict mode, ignored with a warning
        /// otherwise).
        case unknownKey
        /// A value of the right type outside what is accepted: a lifetime below one day, a region code that is not
        /// ISO 3166, an `unanswered` rule other than `optIn` or `optOut`.
        case invalidValue
        /// `resetEnabledFeatures` is true: every launch discards the choices the app and the user made, keeping only
        /// their refusals (consent refusals, and the flags revoke-all turned off); a warning.
        case resetDiscardsChoices
        /// Files compared with `featuregate check --same-features` enable different features: reported on each
        /// file's `enabledFeatures`, once per feature that differs. Only that command reports it, as an error.
        case differentFeatures
    }

    /// Whether this is an error (the config is invalid; the reader returns no configuration) or a warning (the
    /// config is valid; something was dropped or defaulted, and never widened).
    public let severity: DiagnosticSeverity
    /// What kind of problem this is.
    public let kind: Kind
    /// The file path, or the source name given to the reader (`<data>` and `<dictionary>` by default).
    public let source: String
    /// Where in the document: `enabledFeatures`, `enabledFeatures[2]`, or `(root)` for the whole file.
    public let keyPath: String
    /// The 1-based line, when the format has lines (XML, JSON, old-style plists, `.properties`) and the problem has
    /// a place.
    public let line: Int?
    /// The 1-based column on ``line``, where it is known: every placed problem of the text formats (XML, JSON and
    /// old-style plists, `.properties` files), at the value (or the key, for a problem with a key; an XML element's
    /// `<`). A binary plist has neither. A column counts characters (Unicode scalars; bytes, in ISO-8859-1).
    public let column: Int?
    /// What was found, e.g. `string "anlytics"` or `boolean true`; `nil` when nothing was there.
    public let found: String?
    /// What would have been accepted.
    public let expected: String?
    /// The closest valid name or key, for a likely misspelling.
    public let suggestion: String?
    /// A sentence saying what is wrong, starting with `line N: ` when the line is known. It does not repeat the
    /// source or the key path.
    public let message: String

    /// The key path of diagnostics about the whole document.
    public static let rootKeyPath = KeyPathTracker.root

    /// Creates a diagnostic. Readers create them; tools and tests may too.
    public init(
        severity: DiagnosticSeverity,
        kind: Kind,
        source: String,
        keyPath: String,
        line: Int? = nil,
        column: Int? = nil,
        found: String? = nil,
        expected: String? = nil,
        suggestion: String? = nil,
        message: String
    ) {
        self.severity = severity
        self.kind = kind
        self.source = source
        self.keyPath = keyPath
        self.line = line
        self.column = column
        self.found = found
        self.expected = expected
        self.suggestion = suggestion
        self.message = message
    }

    /// The same diagnostic at `column`.
    package func at(column: Int?) -> ConfigDiagnostic {
        ConfigDiagnostic(
            severity: severity, kind: kind, source: source, keyPath: keyPath, line: line, column: column, found: found,
            expected: expected, suggestion: suggestion, message: message)
    }

    /// ``message`` without the `line N: ` or `line N, column M: ` in front, for outputs that carry the place in
    /// fields of their own (GitHub annotations, SARIF).
    package var unplacedMessage: String {
        guard let line, message.hasPrefix("line \(line)") else { return message }
        let rest = message.dropFirst("line \(line)".count)
        if rest.hasPrefix(": ") { return String(rest.dropFirst(2)) }
        if let column, rest.hasPrefix(", column \(column): ") {
            return String(rest.dropFirst(", column \(column): ".count))
        }
        return message
    }

    /// `SOURCE: error|warning: KEYPATH: MESSAGE`, the line `featuregate check` prints.
    ///
    /// Every part may hold text from the file (a key, a value): control characters are escaped (`\n`, `\u{1B}`) and
    /// a long key path is cut with its length, so a crafted file cannot forge lines or drive a terminal.
    public var description: String {
        "\(UntrustedText.escapedPath(source)): \(severity.rawValue): \(UntrustedText.escaped(keyPath)): "
            + UntrustedText.escaped(message, limit: .max)
    }
}
