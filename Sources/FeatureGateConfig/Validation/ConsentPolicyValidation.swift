import FeatureGate

/// Reading `consentPolicy`: categories with their features, lifetimes, child and sale-or-sharing marks, and what an
/// unanswered category means per region.
///
/// Fail closed: anything that could leave a category more permitted than written is an error in every mode (a key
/// that looks like a misspelling of a known one, an invalid region code, a lifetime below one day, a wrong type).
/// Only a key nobody knows and a feature name the catalog lacks follow the mode: errors in strict mode, dropped with
/// a warning otherwise.
extension ConfigValidator {
    package static let consentPolicyKey = "consentPolicy"
    /// Folded once: every read checks each top-level key against it.
    private static let consentPolicyTarget = NearMissTarget(consentPolicyKey)
    private static let policyKeys = [
        "version", "categories", "unanswered", "childUnderAge", "declinedAgeRange", "adultRangeDeclaration",
    ]
    private static let categoryKeys = [
        "features", "grantLifetimeDays", "refusalLifetimeDays", "childProhibited", "saleOrSharing",
    ]

    /// Reads `consentPolicy` from the top-level entries: `nil` when absent or invalid (an error is then reported).
    mutating func consentPolicy(in entries: [ConfigNode.Entry]) -> ConsentPolicy? {
        let key = Self.consentPolicyKey
        let matches = entries.filter { $0.key == key }
        reportDuplicates(of: key, in: matches)
        guard let entry = matches.first else {
            for miss in entries where Self.consentPolicyTarget.isNearMiss(miss.key) {
                report(
                    .error, .misspelledKey, miss.key, line: miss.line, found: "key \(quoted(miss.key))",
                    expected: key, suggestion: key,
                    "unknown key \(quoted(miss.key)); did you mean \(quoted(key))? Keys are case-sensitive")
            }
            return nil
        }
        guard let policy = dictionary(entry.value, at: key) else { return nil }
        checkKeys(of: policy, at: key, known: Self.policyKeys)

        var version = 1
        if let node = value(of: "version", in: policy, at: key) {
            version = integer(node, at: "\(key).version", minimum: 0, expected: "a non-negative integer") ?? version
        }
        var result = ConsentPolicy(version: version, features: [:])
        if let node = value(of: "categories", in: policy, at: key) {
            readCategories(node, at: "\(key).categories", into: &result)
        } else {
            report(
                .error, .missingKey, "\(key).categories", line: entry.line, found: nil,
                expected: "a dictionary of categories",
                "missing: list the consent categories, each with the features it governs")
        }
        if let node = value(of: "unanswered", in: policy, at: key) {
            result.unanswered = unanswered(node, at: "\(key).unanswered")
        }
        readChildAge(policy, at: key, into: &result)
        return result
    }

    private mutating func readCategories(_ node: ConfigNode, at path: String, into policy: inout ConsentPolicy) {
        guard let categories = dictionary(node, at: path) else { return }
        for (index, entry) in categories.enumerated() {
            let name = entry.key
            let categoryPath = "\(path).\(name)"
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                report(
                    .error, .emptyName, categoryPath, line: entry.line, found: quoted(name),
                    expected: "a category name", "a consent category needs a name")
                continue
            }
            let occurrences = categories.filter { $0.key == name }
            guard occurrences.count == 1 else {
                // Reported once, at the first occurrence; no occurrence counts.
                if categories.firstIndex(where: { $0.key == name }) == index {
                    reportDuplicates(of: categoryPath, in: occurrences)
                }
                continue
            }
            guard let fields = dictionary(entry.value, at: categoryPath) else { continue }
            checkKeys(of: fields, at: categoryPath, known: Self.categoryKeys)
            let category = ConsentCategory(name)
            var features: Feature = []
            if let node = value(of: "features", in: fields, at: categoryPath) {
                features = self.features(node, at: "\(categoryPath).features")
            }
            policy.features[category] = features
            for (key, keyPath) in [
                ("grantLifetimeDays", \ConsentPolicy.grantLifetimeDays),
                ("refusalLifetimeDays", \ConsentPolicy.refusalLifetimeDays),
            ] {
                guard let node = value(of: key, in: fields, at: categoryPath) else { continue }
                policy[keyPath: keyPath][category] = integer(
                    node, at: "\(categoryPath).\(key)", minimum: 1, expected: "a whole number of days, at least 1")
            }
            for (key, keyPath) in [
                ("childProhibited", \ConsentPolicy.childProhibited),
                ("saleOrSharing", \ConsentPolicy.saleOrSharing),
            ] {
                guard let node = value(of: key, in: fields, at: categoryPath) else { continue }
                if boolean(node, at: "\(categoryPath).\(key)") == true { policy[keyPath: keyPath].insert(category) }
            }
        }
    }

    /// `childUnderAge` (a whole number of years, 1 to 25; 13 by default), `declinedAgeRange` (`"child"`, the
    /// default, or `"notChild"`) and `adultRangeDeclaration` (`"any"`, the default, `"guardianOrChecked"` or
    /// `"checked"`): how a declared age range sets the child mark. An invalid value keeps the default.
    private mutating func readChildAge(_ policy: [ConfigNode.Entry], at key: String, into result: inout ConsentPolicy) {
        if let node = value(of: "childUnderAge", in: policy, at: key),
            let age = integer(node, at: "\(key).childUnderAge", minimum: 1, expected: "an age in whole years, 1 to 25")
        {
            if age <= 25 {
                result.childAge.childUnderAge = age
            } else {
                report(
                    .error, .invalidValue, "\(key).childUnderAge", line: node.line, found: node.summary,
                    expected: "an age in whole years, 1 to 25", "expected an age in whole years, 1 to 25, found \(age)")
            }
        }
        if let text = oneOf(["child", "notChild"], "declinedAgeRange", in: policy, at: key) {
            result.childAge.declinedIsChild = text == "child"
        }
        let declarations = AdultRangeDeclaration.allCases.map(\.rawValue)
        if let text = oneOf(declarations, "adultRangeDeclaration", in: policy, at: key) {
            result.childAge.adultRangeDeclaration = AdultRangeDeclaration(rawValue: text) ?? .any
        }
    }

    /// The string value of `name` when it is one of `values`; otherwise reports an error (with a near miss as the
    /// suggestion) and returns `nil`, so the default stays.
    private mutating func oneOf(
        _ values: [String], _ name: String, in policy: [ConfigNode.Entry], at key: String
    ) -> String? {
        guard let node = value(of: name, in: policy, at: key) else { return nil }
        guard case .string(let text) = node.value, values.contains(text) else {
            let suggestion: String? =
                if case .string(let text) = node.value {
                    values.first { NameMatching.isNearMiss(text, of: $0) }
                } else { nil }
            let expected = values.map(quoted).joined(separator: values.count == 2 ? " or " : ", ")
            report(
                .error, node.isString ? .invalidValue : .wrongType, "\(key).\(name)", line: node.line,
                found: node.summary, expected: expected, suggestion: suggestion,
                "expected \(expected), found \(node.summary)"
                    + (suggestion.map { "; did you mean \(quoted($0))?" } ?? ""))
            return nil
        }
        return text
    }

    private mutating func features(_ node: ConfigNode, at path: String) -> Feature {
        guard case .array(let elements) = node.value else {
            report(
                .error, .wrongType, path, line: node.line, found: node.summary, expected: "an array of feature names",
                "expected an array of feature names, found \(node.summary)")
            return []
        }
        var features: Feature = []
        let names = catalog.entries.map(\.name)
        for (index, element) in elements.enumerated() {
            let elementPath = "\(path)[\(index)]"
            guard let raw = featureName(element, at: elementPath) else { continue }
            if let flag = catalog.feature(named: NameMatching.normalize(raw)) {
                features.formUnion(flag)
                continue
            }
            let suggestion = NameMatching.closest(to: raw, among: names)
            let hint =
                suggestion.map { "; did you mean \(quoted($0))?" }
                ?? ": expected one of \(names.joined(separator: ", "))"
            report(
                mode == .strict ? .error : .warning, .unknownName, elementPath, line: element.line, found: quoted(raw),
                expected: names.joined(separator: ", "), suggestion: suggestion,
                "unknown feature name \(quoted(raw))\(mode == .strict ? "" : " ignored")\(hint)")
        }
        return features
    }

    private mutating func unanswered(_ node: ConfigNode, at path: String) -> UnansweredConsentRules {
        var rules = UnansweredConsentRules()
        guard let entries = dictionary(node, at: path) else { return rules }
        var seen: [String: String] = [:]
        for entry in entries {
            let entryPath = "\(path).\(entry.key)"
            let region = entry.key == "default" ? nil : ConsentRegion(entry.key)
            guard entry.key == "default" || region != nil else {
                let suggestion = NameMatching.isNearMiss(entry.key, of: "default") ? "default" : nil
                report(
                    .error, .invalidValue, entryPath, line: entry.line, found: "key \(quoted(entry.key))",
                    expected: "default, a country (US) or a subdivision (US-CA)", suggestion: suggestion,
                    "\(quoted(entry.key)) is not default, an ISO 3166-1 alpha-2 country (US) or an ISO 3166-2 "
                        + "subdivision (US-CA)" + (suggestion.map { "; did you mean \(quoted($0))?" } ?? ""))
                continue
            }
            let canonical = region?.code ?? "default"
            if let first = seen[canonical] {
                report(
                    .error, .duplicateKey, entryPath, line: entry.line,
                    found: "\(quoted(first)) and \(quoted(entry.key))",
                    expected: "one rule per region", "the rule for \(canonical) is written twice (codes ignore case)")
                continue
            }
            seen[canonical] = entry.key
            guard case .string(let text) = entry.value.value, let rule = UnansweredConsent(rawValue: text) else {
                let found = entry.value.summary
                let suggestion: String? =
                    if case .string(let text) = entry.value.value {
                        UnansweredConsent.allCases.map(\.rawValue).first { NameMatching.isNearMiss(text, of: $0) }
                    } else { nil }
                report(
                    .error, .invalidValue, entryPath, line: entry.value.line, found: found,
                    expected: "\"optIn\" or \"optOut\"", suggestion: suggestion,
                    "expected \"optIn\" or \"optOut\", found \(found)"
                        + (suggestion.map { "; did you mean \(quoted($0))?" } ?? ""))
                continue
            }
            if let region { rules.regions[region] = rule } else { rules.default = rule }
        }
        return rules
    }

    // MARK: - Values

    private mutating func dictionary(_ node: ConfigNode, at path: String) -> [ConfigNode.Entry]? {
        guard case .dictionary(let entries) = node.value else {
            report(
                .error, .wrongType, path, line: node.line, found: node.summary, expected: "a dictionary",
                "expected a dictionary, found \(node.summary)")
            return nil
        }
        return entries
    }

    /// The value of `key` in `entries`; reports a duplicate.
    private mutating func value(of key: String, in entries: [ConfigNode.Entry], at path: String) -> ConfigNode? {
        let matches = entries.filter { $0.key == key }
        reportDuplicates(of: "\(path).\(key)", in: matches)
        return matches.first?.value
    }

    /// Reports every key of `entries` that is not in `known`: a near miss of a known key is an error in every mode;
    /// any other key is an error in strict mode and ignored with a warning otherwise.
    private mutating func checkKeys(of entries: [ConfigNode.Entry], at path: String, known: [String]) {
        for entry in entries where !known.contains(entry.key) {
            let keyPath = "\(path).\(entry.key)"
            if let suggestion = known.first(where: { NameMatching.isNearMiss(entry.key, of: $0) }) {
                report(
                    .error, .misspelledKey, keyPath, line: entry.line, found: "key \(quoted(entry.key))",
                    expected: suggestion, suggestion: suggestion,
                    "unknown key \(quoted(entry.key)); did you mean \(quoted(suggestion))? Keys are case-sensitive")
            } else {
                let strict = mode == .strict
                report(
                    strict ? .error : .warning, .unknownKey, keyPath, line: entry.line,
                    found: "key \(quoted(entry.key))",
                    expected: known.joined(separator: ", "),
                    "unknown key \(quoted(entry.key))\(strict ? "" : " ignored"): expected \(known.joined(separator: ", "))"
                )
            }
        }
    }

    private mutating func integer(_ node: ConfigNode, at path: String, minimum: UInt64, expected: String) -> Int? {
        guard case .integer(let integer) = node.value, !integer.isNegative, let magnitude = integer.magnitude,
            magnitude >= minimum, magnitude <= UInt64(Int32.max)
        else {
            report(
                .error, node.isInteger ? .invalidValue : .wrongType, path, line: node.line, found: node.summary,
                expected: expected, "expected \(expected), found \(node.summary)")
            return nil
        }
        return Int(magnitude)
    }

    private mutating func boolean(_ node: ConfigNode, at path: String) -> Bool? {
        guard case .boolean(let value) = node.value else {
            report(
                .error, .wrongType, path, line: node.line, found: node.summary,
                expected: "a boolean (<true/> or <false/> in a plist, true or false in JSON)",
                "expected a boolean (<true/> or <false/> in a plist, true or false in JSON), found \(node.summary)")
            return nil
        }
        return value
    }
}

extension ConfigNode {
    fileprivate var isInteger: Bool {
        if case .integer = value { return true }
        return false
    }

    fileprivate var isString: Bool {
        if case .string = value { return true }
        return false
    }
}
