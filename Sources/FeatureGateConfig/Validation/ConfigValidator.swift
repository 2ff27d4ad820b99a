import FeatureGate

/// Turns a parsed tree into a configuration and diagnostics, by the rules of a ``ConfigReadingMode``.
///
/// The one rule everything here keeps: the result never holds a flag that the document does not name, by name,
/// by `all`, or by a bit of an integer bitmask (or, in Airship-compatible mode only, by leaving the key out).
package struct ConfigValidator {
    package static let enabledFeaturesKey = "enabledFeatures"
    package static let resetEnabledFeaturesKey = "resetEnabledFeatures"
    /// Airship's own analytics switch, and the older name it still reads; FeatureGate's gate does not read either.
    package static let analyticsSwitchKeys = ["isAnalyticsEnabled", "analyticsEnabled"]
    /// The two keys, folded once, for finding keys that look like them.
    private static let enabledFeaturesTarget = NearMissTarget(enabledFeaturesKey)
    private static let resetEnabledFeaturesTarget = NearMissTarget(resetEnabledFeaturesKey)
    /// Names Airship retired; a config may still carry them.
    package static let retiredNames: Set<String> = ["chat", "location"]
    private static let retiredBits: [Int: String] = [3: "chat", 7: "location"]

    let mode: ConfigReadingMode
    let catalog: FeatureCatalog
    let limits: ConfigLimits
    let source: String
    /// Whether the document's format has no booleans, so that the strings `YES` and `NO` stand for them (an
    /// old-style plist, as Apple reads it).
    let booleansAreStrings: Bool
    private(set) var diagnostics: [ConfigDiagnostic] = []
    /// The top-level keys other than those the validator reads, in document order.
    private(set) var ignoredKeys: [String] = []
    /// The `consentPolicy` the document holds, once ``validate(_:)`` read it.
    private(set) var consentPolicy: ConsentPolicy?

    package init(
        mode: ConfigReadingMode, catalog: FeatureCatalog, limits: ConfigLimits, source: String,
        booleansAreStrings: Bool = false
    ) {
        self.mode = mode
        self.catalog = catalog
        self.limits = limits
        self.source = source
        self.booleansAreStrings = booleansAreStrings
    }

    /// Validates `root`; returns the configuration, or `nil` when there is an error in ``diagnostics``.
    package mutating func validate(_ root: ConfigNode) -> PrivacyConfiguration? {
        defer { sortDiagnostics() }
        guard case .dictionary(let entries) = root.value else {
            report(
                .error, .notADictionary, ConfigDiagnostic.rootKeyPath, line: root.line, found: root.summary,
                expected: "a dictionary (a plist <dict> or a JSON object)",
                "expected a dictionary at the top level, found \(root.summary)")
            return nil
        }
        let known = [Self.enabledFeaturesKey, Self.resetEnabledFeaturesKey, Self.consentPolicyKey]
        ignoredKeys = entries.map(\.key).filter { !known.contains($0) }
        let features = enabledFeatures(in: entries)
        let reset = resetEnabledFeatures(in: entries)
        if let features { reportAnalyticsSwitch(in: entries, enabled: features) }
        consentPolicy = consentPolicy(in: entries)
        guard let features, let reset, !diagnostics.contains(where: { $0.severity == .error }) else { return nil }
        return PrivacyConfiguration(enabledFeatures: features, resetEnabledFeatures: reset)
    }

    // MARK: - enabledFeatures

    private mutating func enabledFeatures(in entries: [ConfigNode.Entry]) -> Feature? {
        let key = Self.enabledFeaturesKey
        let matches = entries.filter { $0.key == key }
        reportDuplicates(of: key, in: matches)
        guard let entry = matches.first else {
            let nearMisses = entries.filter { Self.enabledFeaturesTarget.isNearMiss($0.key) }
            for miss in nearMisses {
                report(
                    .error, .misspelledKey, miss.key, line: miss.line, found: "key \(quoted(miss.key))",
                    expected: key, suggestion: key,
                    "unknown key \(quoted(miss.key)); did you mean \(quoted(key))? Keys are case-sensitive, and "
                        + "\(key) is missing")
            }
            guard nearMisses.isEmpty else { return nil }
            if mode == .airshipCompatible {
                report(
                    .warning, .defaultedToAll, key, found: nil, expected: "an array of feature names",
                    "missing, so every feature is enabled, as Airship does; write [\"all\"] to say so. Writing [] "
                        + "instead turns off every feature the app or user has not set, on existing installs as well "
                        + "as new ones")
                return catalog.allFeatures
            }
            report(
                .error, .missingKey, key, found: nil,
                expected: "[\"all\"] for Airship's default, or [] for default-off",
                "missing. Airship enables every feature when it is missing (--airship reads the file as Airship "
                    + "does); write [\"all\"] to keep that. Writing [] instead turns off every feature the app or "
                    + "user has not set, on existing installs as well as new ones: push, analytics and in-app "
                    + "messages stop for users who never changed a setting")
            return nil
        }
        reportIgnoredNearMisses(of: Self.enabledFeaturesTarget, in: entries)
        return features(from: entry.value)
    }

    /// The feature name an element of a list of names holds, or `nil` after reporting that it is not a string.
    mutating func featureName(_ element: ConfigNode, at path: String) -> String? {
        guard case .string(let name) = element.value else {
            report(
                .error, .wrongType, path, line: element.line, found: element.summary,
                expected: "a feature name (a string)", "expected a feature name (a string), found \(element.summary)")
            return nil
        }
        return name
    }

    private mutating func features(from node: ConfigNode) -> Feature? {
        let key = Self.enabledFeaturesKey
        switch node.value {
        case .array(let elements):
            guard checkNameCount(elements.count, line: node.line) else { return nil }
            var tally = NameTally()
            for (index, element) in elements.enumerated() {
                let path = "\(key)[\(index)]"
                guard let name = featureName(element, at: path) else { continue }
                tally.add(
                    resolve(name, keyPath: path, line: element.line, item: nil), keyPath: path, line: element.line)
            }
            reportNone(tally)
            return tally.features
        case .string(let list):
            if NameMatching.normalize(list).isEmpty {
                report(
                    .warning, .emptyName, key, line: node.line, found: node.summary, expected: "feature names",
                    "an empty string enables no features; write [] to say so")
                return []
            }
            let items = list.split(separator: ",", omittingEmptySubsequences: false)
            guard checkNameCount(items.count, line: node.line) else { return nil }
            var tally = NameTally()
            for (index, item) in items.enumerated() {
                let position = items.count > 1 ? (index + 1, items.count) : nil
                tally.add(
                    resolve(String(item), keyPath: key, line: node.line, item: position), keyPath: key, line: node.line)
            }
            reportNone(tally)
            return tally.features
        case .integer(let integer):
            return features(fromBitmask: integer, line: node.line)
        default:
            report(
                .error, .wrongType, key, line: node.line, found: node.summary,
                expected: "an array of feature names, a comma-separated string of names, or an integer bitmask",
                "expected an array of feature names, a comma-separated string of names, or an integer bitmask, "
                    + "found \(node.summary)")
            return nil
        }
    }

    /// What one name contributes, with a warning or error for anything but a flag, `all` or `none`.
    private mutating func resolve(_ raw: String, keyPath: String, line: Int?, item: (Int, Int)?) -> Resolution {
        let name = NameMatching.normalize(raw)
        let place = item.map { " (item \($0.0) of \($0.1))" } ?? ""
        if name.isEmpty {
            report(
                .warning, .emptyName, keyPath, line: line, found: quoted(raw), expected: "a feature name",
                "empty feature name\(place) ignored")
            return .empty
        }
        if name == "all" { return .flags(catalog.allFeatures) }
        if name == "none" { return .none }
        if let flag = catalog.feature(named: name) { return .flags(flag) }
        if Self.retiredNames.contains(name) {
            report(
                .warning, .retiredName, keyPath, line: line, found: quoted(raw), expected: validNames,
                "\(quoted(name))\(place) is a feature Airship retired; ignored")
            return .dropped
        }
        let suggestion = NameMatching.closest(to: name, among: catalog.entries.map(\.name) + ["all", "none"])
        let hint = suggestion.map { "; did you mean \(quoted($0))?" } ?? ": expected one of \(validNames)"
        if mode == .strict {
            report(
                .error, .unknownName, keyPath, line: line, found: quoted(raw), expected: validNames,
                suggestion: suggestion, "unknown feature name \(quoted(raw))\(place)\(hint)")
        } else {
            report(
                .warning, .unknownName, keyPath, line: line, found: quoted(raw), expected: validNames,
                suggestion: suggestion, "unknown feature name \(quoted(raw))\(place) ignored\(hint)")
        }
        return .dropped
    }

    private var validNames: String {
        (catalog.entries.map(\.name) + ["all", "none"]).joined(separator: ", ")
    }

    private mutating func reportNone(_ tally: NameTally) {
        guard let none = tally.firstNone, tally.otherNames > 0 else { return }
        report(
            .warning, .noneWithOtherNames, none.keyPath, line: none.line, found: "\"none\" and other names",
            expected: "\"none\" alone, or only other names",
            "\"none\" next to other names turns nothing off; the other names still count")
    }

    private mutating func checkNameCount(_ count: Int, line: Int?) -> Bool {
        guard count > limits.maximumNameCount else { return true }
        report(
            .error, .tooManyNames, Self.enabledFeaturesKey, line: line, found: "\(count) names",
            expected: "at most \(limits.maximumNameCount) names",
            "lists \(count) names; at most \(limits.maximumNameCount) are read")
        return false
    }

    private mutating func features(fromBitmask integer: ConfigInteger, line: Int?) -> Feature? {
        let key = Self.enabledFeaturesKey
        if integer.isNegative {
            report(
                .error, .negativeBitmask, key, line: line, found: "integer \(integer.text)",
                expected: "a non-negative integer bitmask",
                "expected a non-negative integer bitmask, found \(integer.text)")
            return nil
        }
        guard let bits = integer.magnitude else {
            report(
                .error, .bitmaskOutOfRange, key, line: line, found: "integer \(integer.text)",
                expected: "an integer bitmask of at most 64 bits",
                "expected an integer bitmask of at most 64 bits, found \(integer.text)")
            return nil
        }
        let known = UInt64(catalog.allFeatures.rawValue)
        let dropped = bits & ~known
        if dropped != 0 {
            let positions = (0..<64).filter { dropped & (1 << UInt64($0)) != 0 }
            let listed = positions.map { bit in Self.retiredBits[bit].map { "\(bit) (retired \($0))" } ?? "\(bit)" }
            let subject =
                positions.count == 1
                ? "bit \(listed[0]) is not a known feature and was"
                : "bits \(listed.joined(separator: ", ")) are not known features and were"
            report(
                .warning, .unknownBits, key, line: line,
                found: "integer \(integer.text) (0x\(String(bits, radix: 16)))",
                expected: "bits of known features (mask 0x\(String(known, radix: 16)))",
                "\(subject) dropped from \(integer.text)")
        }
        return Feature(rawValue: UInt(truncatingIfNeeded: bits & known))
    }

    // MARK: - resetEnabledFeatures

    private mutating func resetEnabledFeatures(in entries: [ConfigNode.Entry]) -> Bool? {
        let key = Self.resetEnabledFeaturesKey
        let matches = entries.filter { $0.key == key }
        reportDuplicates(of: key, in: matches)
        guard let entry = matches.first else {
            for miss in entries where Self.resetEnabledFeaturesTarget.isNearMiss(miss.key) {
                report(
                    .warning, .misspelledKey, miss.key, line: miss.line, found: "key \(quoted(miss.key))",
                    expected: key, suggestion: key,
                    "unknown key \(quoted(miss.key)) ignored; did you mean \(quoted(key))? Keys are case-sensitive, "
                        + "and \(key) is read as false")
            }
            return false
        }
        reportIgnoredNearMisses(of: Self.resetEnabledFeaturesTarget, in: entries)
        guard let reset = boolean(entry.value) else {
            let expected =
                booleansAreStrings
                ? "YES or NO (an old-style plist has no booleans)"
                : "a boolean (<true/> or <false/> in a plist, true or false in JSON)"
            report(
                .error, .wrongType, key, line: entry.value.line, found: entry.value.summary, expected: expected,
                "expected \(expected), found \(entry.value.summary)")
            return nil
        }
        if reset {
            report(
                .warning, .resetDiscardsChoices, key, line: entry.value.line, found: entry.value.summary,
                expected: "false, to keep the user's choices across launches",
                "true: every launch discards the choices the app and the user made and applies enabledFeatures "
                    + "again, keeping only their refusals (consent refusals, and the flags revoke-all turned off)")
        }
        return reset
    }

    /// A boolean, or in a format without booleans the string `YES` or `NO`.
    private func boolean(_ node: ConfigNode) -> Bool? {
        switch node.value {
        case .boolean(let flag): flag
        case .string("YES") where booleansAreStrings: true
        case .string("NO") where booleansAreStrings: false
        default: nil
        }
    }

    // MARK: - analyticsEnabled

    /// Warns when Airship's own analytics switch is off: Airship then records no analytics events, whatever
    /// `enabledFeatures` says, while FeatureGate's gate follows `enabledFeatures` alone.
    private mutating func reportAnalyticsSwitch(in entries: [ConfigNode.Entry], enabled features: Feature) {
        // Airship reads the current name first and falls back to the older one.
        guard
            let entry = Self.analyticsSwitchKeys.lazy.compactMap({ key in entries.first { $0.key == key } }).first,
            boolean(entry.value) == false
        else { return }
        let gate =
            features.contains(.analytics)
            ? "analytics is on here because enabledFeatures enables it; leave analytics out of enabledFeatures to "
                + "keep it off"
            : "analytics is off here too, because enabledFeatures does not enable it"
        report(
            .warning, .airshipAnalyticsSwitchedOff, entry.key, line: entry.line, found: entry.value.summary,
            expected: "analytics left out of enabledFeatures",
            "false: Airship SDKs record and send no analytics events while it is false, whatever enabledFeatures "
                + "says. FeatureGate does not read this key: \(gate)")
    }

    // MARK: - Reporting

    /// Warns about keys that look like `key` when `key` itself is present: they are ignored, which may surprise.
    private mutating func reportIgnoredNearMisses(of target: NearMissTarget, in entries: [ConfigNode.Entry]) {
        let key = target.name
        for miss in entries where target.isNearMiss(miss.key) {
            report(
                .warning, .misspelledKey, miss.key, line: miss.line, found: "key \(quoted(miss.key))", expected: key,
                suggestion: key,
                "unknown key \(quoted(miss.key)) ignored; did you mean \(quoted(key))? Only \(key) is read")
        }
    }

    mutating func reportDuplicates(of key: String, in matches: [ConfigNode.Entry]) {
        for duplicate in matches.dropFirst() {
            report(
                .error, .duplicateKey, key, line: duplicate.line, found: "\(matches.count) occurrences",
                expected: "one occurrence",
                "appears \(matches.count) times; write it once, so it is clear which value counts")
            break
        }
    }

    mutating func report(
        _ severity: DiagnosticSeverity,
        _ kind: ConfigDiagnostic.Kind,
        _ keyPath: String,
        line: Int? = nil,
        found: String?,
        expected: String?,
        suggestion: String? = nil,
        _ message: String
    ) {
        diagnostics.append(
            ConfigDiagnostic(
                severity: severity, kind: kind, source: source, keyPath: keyPath, line: line, found: found,
                expected: expected, suggestion: suggestion,
                message: line.map { "line \($0): \(message)" } ?? message))
    }

    /// Puts diagnostics in document order where lines are known; the sort is stable.
    private mutating func sortDiagnostics() {
        diagnostics = diagnostics.enumerated()
            .sorted { ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset) }
            .map(\.element)
    }
}

/// What one name of `enabledFeatures` contributed.
private enum Resolution {
    case flags(Feature)
    case none
    case empty
    case dropped
}

/// The union of the names of `enabledFeatures`, and where `none` appeared.
private struct NameTally {
    var features: Feature = []
    var firstNone: (keyPath: String, line: Int?)?
    var otherNames = 0

    mutating func add(_ resolution: Resolution, keyPath: String, line: Int?) {
        switch resolution {
        case .flags(let flags):
            features.formUnion(flags)
            otherNames += 1
        case .none:
            if firstNone == nil { firstNone = (keyPath, line) }
        case .dropped:
            otherNames += 1
        case .empty:
            break
        }
    }
}
