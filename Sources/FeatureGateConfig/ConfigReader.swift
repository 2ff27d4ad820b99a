import FeatureGate
import Foundation

/// Reads `enabledFeatures`, `resetEnabledFeatures` and `consentPolicy` from an XML plist, a binary plist, an
/// old-style (OpenStep) plist, a JSON file or Airship Android's `airshipconfig.properties`, and enables exactly what
/// it names.
///
/// ```swift
/// let reader = ConfigReader(catalog: myCatalog)            // strict by default
/// let result = try reader.read(contentsOf: configURL)
/// let privacy = PrivacyManager(configuration: result.configuration, store: store, catalog: myCatalog)
/// ```
///
/// ## What `enabledFeatures` accepts
/// - an array of names: the catalog's flag names (`push`, `in_app_automation`, and any flag the SDK registered),
///   `all` (every flag of the catalog) and `none`, ignoring ASCII case and surrounding whitespace. `none` next to
///   other names turns nothing off: the other names still count (with a warning);
/// - one comma-separated string of the same names (Airship 16–18): `"push, analytics"`;
/// - an integer bitmask (Airship Android), masked to the catalog's flags; dropped bits get a warning;
/// - in a `.properties` file (``ConfigFormat/properties``, told by a `.properties` source name or a leading `#`/`!`
///   comment), names separated by commas and spaces, or an integer bitmask; `resetEnabledFeatures` is `true` or
///   `false` in any case.
///
/// `consentPolicy` (optional) builds ``ConfigReadResult/consentPolicy``: its categories with their features,
/// lifetimes, child and sale-or-sharing marks, and what an unanswered category means per region. Anything in it that
/// could leave consent looser than written is an error in every mode.
///
/// `resetEnabledFeatures` is a boolean (in an old-style plist, which has no booleans, `YES` or `NO`) and defaults to
/// `false`. Other top-level keys are ignored, so a whole `AirshipConfig.plist` loads; `isAnalyticsEnabled` or
/// `analyticsEnabled` set to false (Airship's own analytics switch) gets a warning, since the gate does not read it.
/// The retired Airship names `chat` and `location` are dropped with a warning in
/// every mode. See ``ConfigReadingMode`` for unknown names and a missing `enabledFeatures`.
///
/// ## Failure
/// Every entry point throws ``ConfigError`` with every error found, each with the source, key path, line (every
/// text format), what was found and what was expected. No input, however malformed, yields more features than it names;
/// limits (``ConfigLimits``) keep huge or deeply nested input from costing more than a diagnostic.
///
/// The reader is a value with no state: use one from any thread.
public struct ConfigReader: Sendable {
    /// How unknown names and a missing `enabledFeatures` are treated.
    public var mode: ConfigReadingMode
    /// The flags and names the config may use; `all` means every flag in it.
    public var catalog: FeatureCatalog
    /// Size, depth and count limits.
    public var limits: ConfigLimits

    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - mode: ``ConfigReadingMode/strict`` unless you are loading files written for Airship.
    ///   - catalog: The built-in flags, plus any your SDK registered, so configs can name them.
    ///   - limits: Bounds on size, nesting and counts.
    public init(mode: ConfigReadingMode = .strict, catalog: FeatureCatalog = .builtIn, limits: ConfigLimits = .default)
    {
        self.mode = mode
        self.catalog = catalog
        self.limits = limits
    }

    /// Reads a config file. The format is judged from the content, not the extension.
    ///
    /// The file is read once, up to ``ConfigLimits/maximumFileSize`` plus one byte; nothing is written. Only a
    /// regular file is read: a FIFO, a device or a directory is an ``ConfigDiagnostic/Kind/unreadableFile`` error,
    /// reported without blocking.
    /// Diagnostics name the file by `url.relativePath`, so a relative URL prints as it was given.
    public func read(contentsOf url: URL) throws(ConfigError) -> ConfigReadResult {
        try readDocument(contentsOf: url).result
    }

    /// Reads a config file as ``read(contentsOf:)`` does, and returns its parsed tree too.
    package func readDocument(contentsOf url: URL) throws(ConfigError) -> ConfigDocument {
        let file = try readBytes(contentsOf: url)
        return try readDocument(bytes: file.bytes, source: file.source)
    }

    /// Reads a config file's bytes as ``read(contentsOf:)`` does, with the name its diagnostics give it.
    package func readBytes(contentsOf url: URL) throws(ConfigError) -> (source: String, bytes: [UInt8]) {
        let source = url.relativePath.isEmpty ? url.path(percentEncoded: false) : url.relativePath
        do {
            return (source, try Self.readFile(atPath: url.path(percentEncoded: false), limit: limits.maximumFileSize))
        } catch {
            throw ConfigError(source: source, format: nil, diagnostics: [error.diagnostic(source: source)])
        }
    }

    /// Reads a config from memory.
    ///
    /// - Parameters:
    ///   - data: The file's bytes, in any of the three formats.
    ///   - sourceName: The name diagnostics give the data, such as the path it came from.
    public func read(_ data: Data, sourceName: String = "<data>") throws(ConfigError) -> ConfigReadResult {
        try readDocument(data, sourceName: sourceName).result
    }

    /// Reads a config from memory as ``read(_:sourceName:)`` does, and returns its parsed tree too.
    package func readDocument(_ data: Data, sourceName: String = "<data>") throws(ConfigError) -> ConfigDocument {
        guard data.count <= limits.maximumFileSize else {
            throw ConfigError(
                source: sourceName, format: nil,
                diagnostics: [
                    FileFailure.tooLarge(size: data.count, limit: limits.maximumFileSize).diagnostic(source: sourceName)
                ])
        }
        return try readDocument(bytes: [UInt8](data), source: sourceName)
    }

    /// Reads a config that ships as a bundle resource, such as `AirshipConfig.plist`.
    ///
    /// - Parameters:
    ///   - name: The resource name, with or without its extension.
    ///   - fileExtension: The extension, when `name` has none.
    ///   - bundle: The bundle to look in.
    public func read(
        resource name: String,
        withExtension fileExtension: String? = nil,
        in bundle: Bundle
    ) throws(ConfigError) -> ConfigReadResult {
        guard let url = bundle.url(forResource: name, withExtension: fileExtension) else {
            let fullName = fileExtension.map { "\(name).\($0)" } ?? name
            throw ConfigError(
                source: fullName, format: nil,
                diagnostics: [
                    ConfigDiagnostic(
                        severity: .error, kind: .resourceNotFound, source: fullName,
                        keyPath: ConfigDiagnostic.rootKeyPath, found: nil, expected: "a resource named \(fullName)",
                        message: "no resource named \(quoted(fullName)) in the bundle at \(bundle.bundlePath)")
                ])
        }
        return try read(contentsOf: url)
    }

    /// Reads a config that is already parsed, such as a dictionary inside `Info.plist`.
    ///
    /// Booleans are told apart from integers even as `NSNumber`. The result's ``ConfigReadResult/format`` is `nil`,
    /// and diagnostics carry no lines.
    public func read(
        dictionary: [String: Any],
        sourceName: String = "<dictionary>"
    ) throws(ConfigError) -> ConfigReadResult {
        let root: ConfigNode
        do {
            root = try FoundationValueBridge.node(from: dictionary, limits: limits)
        } catch {
            throw ConfigError(source: sourceName, format: nil, diagnostics: [error.diagnostic(source: sourceName)])
        }
        return try validate(root, format: nil, source: sourceName)
    }

    // MARK: - Pipeline

    /// Detects the format, parses and validates. Every failure becomes a diagnostic.
    package func read(bytes: [UInt8], source: String) throws(ConfigError) -> ConfigReadResult {
        try readDocument(bytes: bytes, source: source).result
    }

    /// Detects the format, parses and validates, and keeps the tree.
    package func readDocument(bytes: [UInt8], source: String) throws(ConfigError) -> ConfigDocument {
        let (format, root) = try parse(bytes: bytes, source: source)
        return ConfigDocument(result: try validate(root, format: format, source: source), root: root)
    }

    /// Detects the format and parses, without validating the keys.
    package func parse(bytes: [UInt8], source: String) throws(ConfigError) -> (ConfigFormat, ConfigNode) {
        func fail(_ failure: ParseFailure, _ format: ConfigFormat?) -> ConfigError {
            ConfigError(source: source, format: format, diagnostics: [failure.diagnostic(source: source)])
        }
        if let failure = Self.encodingFailure(bytes) { throw fail(failure, nil) }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if body.allSatisfy(isJSONWhitespace) {
            throw fail(
                ParseFailure(
                    .emptyFile,
                    (body.isEmpty ? "the file is empty" : "the file holds only whitespace")
                        + ": expected a dictionary with an enabledFeatures key",
                    found: "\(bytes.count) bytes", expected: "a dictionary with an enabledFeatures key"),
                nil)
        }
        // A `.properties` file is told by its name: `key = value` also starts an old-style plist.
        guard let format = Self.isPropertiesName(source) ? .properties : ConfigFormat.detect(in: bytes) else {
            throw fail(Self.unrecognized(body), nil)
        }
        // ISO-8859-1, every byte a character, is what java.util.Properties reads.
        if format != .binary && format != .properties, let offset = firstInvalidUTF8Offset(in: bytes) {
            let place = textPlace(of: offset, in: bytes)
            throw fail(
                ParseFailure(
                    .invalidEncoding, line: place.line, column: place.column,
                    "byte 0x\(String(bytes[offset], radix: 16, uppercase: true)) at offset \(offset) is not UTF-8; "
                        + "save the file as UTF-8",
                    found: "byte 0x\(String(bytes[offset], radix: 16, uppercase: true))", expected: "UTF-8 text"),
                format)
        }
        do {
            switch format {
            case .json: return (format, try JSONConfigParser.parse(bytes, limits: limits))
            case .xml: return (format, try XMLPlistParser.parse(bytes, limits: limits))
            case .binary: return (format, try BinaryPlistParser.parse(bytes, limits: limits))
            case .openStep: return (format, try OpenStepPlistParser.parse(bytes, limits: limits))
            case .properties: return (format, PropertiesParser.tree(try PropertiesParser.parse(bytes)))
            }
        } catch {
            throw fail(error, format)
        }
    }

    private func validate(
        _ root: ConfigNode, format: ConfigFormat?, source: String
    ) throws(ConfigError)
        -> ConfigReadResult
    {
        var validator = ConfigValidator(
            mode: mode, catalog: catalog, limits: limits, source: source, booleansAreStrings: format == .openStep)
        let configuration = validator.validate(root)
        let diagnostics = validator.diagnostics.map { $0.at(column: $0.column ?? Self.column(of: $0, in: root)) }
        guard let configuration else {
            throw ConfigError(source: source, format: format, diagnostics: diagnostics)
        }
        return ConfigReadResult(
            configuration: configuration, format: format, source: source, warnings: diagnostics,
            ignoredKeys: validator.ignoredKeys, consentPolicy: validator.consentPolicy)
    }

    /// The column of what a diagnostic points at, where the parser recorded columns (every text format): the value
    /// its key path names, or the key for a problem with a key, on the diagnostic's line. A path that names nothing in
    /// the tree (a missing nested key) points at the closest enclosing value on that line.
    package static func column(of diagnostic: ConfigDiagnostic, in root: ConfigNode) -> Int? {
        guard let line = diagnostic.line else { return nil }
        // A problem with a key points at the key; any other, at the value.
        let aboutTheKey: Set<ConfigDiagnostic.Kind> = [.misspelledKey, .duplicateKey, .keyWithoutValue, .unknownKey]
        var path = Substring(diagnostic.keyPath)
        if path == ConfigDiagnostic.rootKeyPath { return root.line == line ? root.column : nil }
        while !path.isEmpty {
            // The last match first: of duplicate keys, the one a diagnostic names is never the first.
            for (entry, node) in places(of: path, in: root, atTop: true).reversed() {
                if node.line == line && (entry == nil || !aboutTheKey.contains(diagnostic.kind)) { return node.column }
                if let entry, entry.line == line { return entry.column }
            }
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { break }
            path = path[..<cut]
        }
        return nil
    }

    /// Every value `path` can name below `node` (a key may hold `.` or `[`, so a path may read more than one way),
    /// with the dictionary entry that holds it, if any.
    private static func places(
        of path: Substring, in node: ConfigNode, atTop: Bool
    ) -> [(entry: ConfigNode.Entry?, node: ConfigNode)] {
        switch node.value {
        case .array(let elements):
            guard path.first == "[", let close = path.firstIndex(of: "]"),
                let index = Int(path[path.index(after: path.startIndex)..<close]), elements.indices.contains(index)
            else { return [] }
            let rest = path[path.index(after: close)...]
            return rest.isEmpty ? [(nil, elements[index])] : places(of: rest, in: elements[index], atTop: false)
        case .dictionary(let entries):
            var keyed = path
            if !atTop {
                guard keyed.first == "." else { return [] }
                keyed = keyed.dropFirst()
            }
            var found: [(entry: ConfigNode.Entry?, node: ConfigNode)] = []
            for entry in entries where keyed.hasPrefix(entry.key) {
                let rest = keyed.dropFirst(entry.key.count)
                if rest.isEmpty {
                    found.append((entry, entry.value))
                } else if rest.first == "." || rest.first == "[" {
                    found += places(of: rest, in: entry.value, atTop: false)
                }
            }
            return found
        default:
            return []
        }
    }

    /// Whether a source name ends in `.properties`, in any case.
    package static func isPropertiesName(_ source: String) -> Bool {
        source.lowercased().hasSuffix(".properties")
    }

    /// UTF-16 and UTF-32 text, with or without a byte order mark, gets a clear message instead of a syntax error.
    private static func encodingFailure(_ bytes: [UInt8]) -> ParseFailure? {
        // Without a byte order mark, UTF-16 (or UTF-32) text starts with '<', '{', '[' or whitespace next to a NUL.
        let starts = Array("<{[ \t\r\n".utf8)
        let utf16 =
            bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE])
            || (bytes.count >= 2
                && ((bytes[0] == 0 && starts.contains(bytes[1])) || (bytes[1] == 0 && starts.contains(bytes[0]))))
        guard utf16 else { return nil }
        return ParseFailure(
            .invalidEncoding, line: 1, column: 1, "the file is UTF-16 or UTF-32 text; save it as UTF-8",
            found: "UTF-16 or UTF-32 text", expected: "UTF-8 text")
    }

    private static func unrecognized(_ body: ArraySlice<UInt8>) -> ParseFailure {
        let start = body.drop(while: isJSONWhitespace).prefix(16)
        let printable = start.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        let found =
            printable
            ? quoted(String(decoding: start, as: UTF8.self))
            : "bytes " + start.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
        let expected =
            "an XML plist (<?xml or <plist), a binary plist (bplist00), a JSON object ({) or an old-style plist "
            + "({ key = value; })"
        return ParseFailure(
            .unrecognizedFormat, "expected \(expected), found \(found)\(start.count == 16 ? "…" : "")",
            found: found, expected: expected)
    }

    // MARK: - Files

    private enum FileFailure: Error {
        case system(operation: String, code: Int32)
        /// `size` is `nil` when reading stopped at the limit, so the real size is unknown.
        case tooLarge(size: Int?, limit: Int)
        /// A FIFO, a device or a directory: the payload says what was found.
        case notRegularFile(String)

        func diagnostic(source: String) -> ConfigDiagnostic {
            switch self {
            case .system(let operation, let code):
                ConfigDiagnostic(
                    severity: .error, kind: .unreadableFile, source: source, keyPath: ConfigDiagnostic.rootKeyPath,
                    found: String(cString: strerror(code)), expected: "a readable file",
                    message: "cannot \(operation) the file: \(String(cString: strerror(code)))")
            case .notRegularFile(let reason):
                ConfigDiagnostic(
                    severity: .error, kind: .unreadableFile, source: source, keyPath: ConfigDiagnostic.rootKeyPath,
                    found: reason, expected: "a regular file", message: "cannot read the file: \(reason)")
            case .tooLarge(let size, let limit):
                ConfigDiagnostic(
                    severity: .error, kind: .fileTooLarge, source: source, keyPath: ConfigDiagnostic.rootKeyPath,
                    found: size.map { "\($0) bytes" } ?? "more than \(limit) bytes",
                    expected: "at most \(limit) bytes",
                    message: "the file is larger than \(limit) bytes, the most a config may be")
            }
        }
    }

    /// Reads a regular file of at most `limit` bytes through the package's one file layer: a FIFO or a device is
    /// refused without blocking, and a huge file without being read.
    private static func readFile(atPath path: String, limit: Int) throws(FileFailure) -> [UInt8] {
        do {
            return [UInt8](try AtomicFile.readNamedFile(atPath: path, limit: limit))
        } catch {
            switch error.problem {
            case .tooLarge: throw .tooLarge(size: nil, limit: limit)
            case .system(let code): throw .system(operation: error.operation.rawValue, code: code)
            case .symbolicLink, .notRegularFile, .notDirectory: throw .notRegularFile(error.reason)
            }
        }
    }
}

/// A config that was read, with the tree it was read from: what `featuregate convert` rewrites and
/// `featuregate check --airship` checks against Airship's own reading.
package struct ConfigDocument: Sendable {
    package var result: ConfigReadResult
    package var root: ConfigNode
}

extension ParseFailure {
    /// The failure as an error at the root of the document.
    func diagnostic(source: String) -> ConfigDiagnostic {
        ConfigDiagnostic(
            severity: .error, kind: kind, source: source, keyPath: keyPath ?? ConfigDiagnostic.rootKeyPath, line: line,
            column: column, found: found, expected: expected, message: placedMessage)
    }
}
