import FeatureGate
import Foundation

/// What a payload disables for one target, and how each name and rule was read.
package struct RemoteConfigDecision: Sendable, Hashable {
    /// The flags to disable, the rule or name behind each, and the refresh interval the applying rules ask for.
    package var disables: RemoteDisables
    /// Every `disabled_features` entry, in order.
    package var names: [RemoteNameOutcome]
    /// Every `disable_features` rule, in order, applying or not.
    package var rules: [RemoteRuleOutcome]
    /// Whether the input was a remote-data response (`payloads`) rather than a bare app config.
    package var isResponse: Bool
}

/// One `disabled_features` entry.
package struct RemoteNameOutcome: Sendable, Hashable {
    /// `disabled_features[N]`.
    package var keyPath: String
    /// The name as written.
    package var name: String
    /// The flags it disables.
    package var features: Feature
}

/// One legacy `disable_features` rule: what it would disable, whether it applies, and why.
package struct RemoteRuleOutcome: Sendable, Hashable {
    /// `disable_features[N]`.
    package var keyPath: String
    /// The flags its `modules` name.
    package var features: Feature
    /// Whether every constraint matched, so its flags are disabled.
    package var applies: Bool
    /// One line per constraint, such as `sdk_versions[0] "17.+" matches SDK 17.2.0`.
    package var explanation: [String]
    /// Its `remote_data_refresh_interval`, in seconds.
    package var refreshInterval: Double?
}

/// Reads Airship's remote-data payloads: the one parser behind the remote layer and `featuregate remote check`.
///
/// The input is a remote-data response (an object with a `payloads` array) or a bare app-config `data` object.
/// From a response only `app_config` and `app_config:<platform>` are read, merged key by key with the platform's
/// winning (`null` there removes the key). In the merged config, `disabled_features` names flags and
/// `disable_features` holds rules targeted by `sdk_versions` (Ivy constraints) and `app_versions` (a predicate).
/// Anything malformed on those paths, even in a rule that would not apply, refuses the whole payload with a
/// `RemotePayloadError`: the parser never widens, drops or guesses.
///
/// A top-level `ok` that is present and not `true` (`{"ok":false,"payloads":[]}`) marks a failed response: it is
/// refused too, so it can never lift a kill switch.
package enum RemoteConfigParser {
    /// The largest payload read: 4 MiB (`RemoteLayerFile.maximumSize`).
    package static let maximumSize = RemoteLayerFile.maximumSize

    /// The `disabled_features` names (matched case-insensitively) and their flags.
    package static let featureNames: [String: Feature] = [
        "push": .push, "contacts": .contacts, "message_center": .messageCenter, "analytics": .analytics,
        "tags_and_attributes": .tagsAndAttributes, "in_app_automation": .inAppAutomation,
        "feature_flags": .featureFlags, "all": .all, "none": [],
    ]

    /// The legacy `modules` names that map to a flag (matched case-insensitively); any other name is ignored.
    package static let moduleNames: [String: Feature] = [
        "push": .push, "analytics": .analytics, "message_center": .messageCenter, "in_app_v2": .inAppAutomation,
        "automation": .inAppAutomation, "contact": .contacts, "named_user": .contacts,
    ]

    /// Reads `data` for `target`.
    ///
    /// - Throws: `RemotePayloadError` naming the key path of the first problem.
    package static func parse(
        _ data: Data, for target: RemoteConfigTarget
    ) throws(RemotePayloadError) -> RemoteConfigDecision {
        guard data.count <= maximumSize else {
            throw RemotePayloadError(
                keyPath: "", found: "\(data.count) bytes", expected: "at most \(maximumSize) bytes")
        }
        let root: JSONValue
        do {
            root = try JSONReader.parse(Array(data))
        } catch {
            throw RemotePayloadError(
                keyPath: "", found: "malformed JSON (\(error.message) at byte \(error.offset))",
                expected: "a JSON object in UTF-8")
        }
        guard case .object(let top) = root else {
            throw RemotePayloadError(keyPath: "", found: root.summary, expected: "a JSON object")
        }
        // A response the server marks as failed is no payload, whatever else it holds.
        if let ok = top["ok"], ok != .bool(true) {
            throw RemotePayloadError(keyPath: "ok", found: ok.summary, expected: "true (or no ok at all)")
        }
        var reader = Reader(target: target)
        let config = try top["payloads"].map { payloads throws(RemotePayloadError) in try reader.merge(payloads) }
        return try reader.decide(config ?? top, isResponse: config != nil)
    }

    /// Walks one payload, remembering which response payload each merged key came from.
    private struct Reader {
        let target: RemoteConfigTarget
        var origins: [String: String] = [:]

        init(target: RemoteConfigTarget) {
            self.target = target
        }

        func fail(_ path: String, _ value: JSONValue?, expected: String) -> RemotePayloadError {
            let key = String(path.prefix { $0 != "[" && $0 != "." })
            return RemotePayloadError(
                keyPath: path, source: origins[key], found: value?.summary ?? "nothing", expected: expected)
        }

        // MARK: - The response

        mutating func merge(_ payloads: JSONValue) throws(RemotePayloadError) -> [String: JSONValue] {
            guard case .array(let elements) = payloads else {
                throw fail("payloads", payloads, expected: "an array of payloads")
            }
            let commonType = "app_config"
            let platformType = "app_config:\(target.platform.rawValue)"
            var common: (index: Int, data: [String: JSONValue])?
            var specific: (index: Int, data: [String: JSONValue])?
            for (index, element) in elements.enumerated() {
                let path = "payloads[\(index)]"
                guard case .object(let payload) = element else {
                    throw fail(path, element, expected: "an object with type, timestamp and data")
                }
                guard case .string(let type)? = payload["type"] else {
                    throw fail(path + ".type", payload["type"], expected: "a string")
                }
                guard case .string(let timestamp)? = payload["timestamp"], ISO8601Timestamp.isValid(timestamp) else {
                    throw fail(path + ".timestamp", payload["timestamp"], expected: "an ISO-8601 timestamp string")
                }
                guard case .object(let data)? = payload["data"] else {
                    throw fail(path + ".data", payload["data"], expected: "an object")
                }
                if type == commonType || type == platformType {
                    let isCommon = type == commonType
                    if let earlier = isCommon ? common?.index : specific?.index {
                        throw fail(
                            path + ".type", payload["type"],
                            expected: "one \(type) payload (payloads[\(earlier)] is one already)")
                    }
                    if isCommon { common = (index, data) } else { specific = (index, data) }
                }
            }
            var merged = common?.data ?? [:]
            if let common {
                for key in merged.keys { origins[key] = "payloads[\(common.index)] \(commonType)" }
            }
            if let specific {
                for (key, value) in specific.data {
                    merged[key] = value.isNull ? nil : value
                    origins[key] = value.isNull ? nil : "payloads[\(specific.index)] \(platformType)"
                }
            }
            return merged
        }

        // MARK: - The app config

        func decide(_ config: [String: JSONValue], isResponse: Bool) throws(RemotePayloadError) -> RemoteConfigDecision
        {
            var disabled: Feature = []
            var reasons: [UInt: String] = [:]
            func disable(_ features: Feature, because reason: String) {
                for flag in features.subtracting(disabled).flags { reasons[flag.rawValue] = reason }
                disabled.formUnion(features)
            }
            func origin(_ key: String) -> String { origins[key].map { " (from \($0))" } ?? "" }
            let names = try readNames(config["disabled_features"])
            for name in names {
                disable(name.features, because: "\(name.keyPath) \"\(name.name)\"" + origin("disabled_features"))
            }
            let rules = try readRules(config["disable_features"])
            var interval: Double?
            for rule in rules where rule.applies {
                disable(rule.features, because: rule.keyPath + origin("disable_features"))
                if let ruleInterval = rule.refreshInterval { interval = max(interval ?? 0, ruleInterval) }
            }
            return RemoteConfigDecision(
                disables: RemoteDisables(features: disabled, rules: reasons, refreshInterval: interval),
                names: names, rules: rules, isResponse: isResponse)
        }

        func readNames(_ value: JSONValue?) throws(RemotePayloadError) -> [RemoteNameOutcome] {
            try readEach(value, at: "disabled_features", expected: "an array of feature names") {
                item, path throws(RemotePayloadError) in
                guard case .string(let name) = item, let features = featureNames[name.lowercased()] else {
                    throw fail(
                        path, item, expected: "one of " + featureNames.keys.sorted().joined(separator: ", "))
                }
                return RemoteNameOutcome(keyPath: path, name: name, features: features)
            }
        }

        func readRules(_ value: JSONValue?) throws(RemotePayloadError) -> [RemoteRuleOutcome] {
            try readEach(value, at: "disable_features", expected: "an array of rule objects") {
                item, path throws(RemotePayloadError) in
                guard case .object(let rule) = item else { throw fail(path, item, expected: "a rule object") }
                return try readRule(rule, path: path)
            }
        }

        /// Each element of the array at `key` (none when it is absent or null), read by `element` with its path.
        func readEach<Element>(
            _ value: JSONValue?, at key: String, expected: String,
            _ element: (JSONValue, String) throws(RemotePayloadError) -> Element
        ) throws(RemotePayloadError) -> [Element] {
            guard let value, !value.isNull else { return [] }
            guard case .array(let items) = value else { throw fail(key, value, expected: expected) }
            var elements: [Element] = []
            for (index, item) in items.enumerated() {
                elements.append(try element(item, "\(key)[\(index)]"))
            }
            return elements
        }

        func readRule(_ rule: [String: JSONValue], path: String) throws(RemotePayloadError) -> RemoteRuleOutcome {
            var explanation: [String] = []
            let features = try readModules(rule["modules"], path: path + ".modules")
            explanation.append(
                "modules: "
                    + (features.isEmpty ? "none" : FeatureCatalog.builtIn.names(of: features).joined(separator: ", ")))

            var applies = true
            if let value = rule["sdk_versions"], !value.isNull {
                let sdkPath = path + ".sdk_versions"
                guard case .array(let items) = value, !items.isEmpty else {
                    throw fail(sdkPath, value, expected: "a non-empty array of Ivy version constraints")
                }
                var matched: String?
                for (index, item) in items.enumerated() {
                    let constraint = try readConstraint(item, path: "\(sdkPath)[\(index)]")
                    if matched == nil && constraint.matches(target.sdkVersion) {
                        matched = "sdk_versions[\(index)] \"\(constraint.text)\" matches SDK \(target.sdkVersion)"
                    }
                }
                explanation.append(matched ?? "sdk_versions: no constraint matches SDK \(target.sdkVersion)")
                applies = matched != nil
            }
            if let value = rule["app_versions"], !value.isNull {
                let predicate = try readPredicate(value, path: path + ".app_versions")
                let matches = predicate.matches(platform: target.platform.rawValue, appVersion: target.appVersion)
                explanation.append("app_versions \(matches ? "matches" : "does not match") app \(target.appVersion)")
                applies = applies && matches
            }
            var interval: Double?
            if let value = rule["remote_data_refresh_interval"], !value.isNull {
                guard case .number(let seconds) = value, seconds.isFinite, seconds >= 0 else {
                    throw fail(
                        path + ".remote_data_refresh_interval", value, expected: "a number of seconds, 0 or more")
                }
                interval = seconds
            }
            return RemoteRuleOutcome(
                keyPath: path, features: features, applies: applies, explanation: explanation, refreshInterval: interval
            )
        }

        func readModules(_ value: JSONValue?, path: String) throws(RemotePayloadError) -> Feature {
            guard let value, !value.isNull else { return [] }
            switch value {
            case .string(let name) where name.lowercased() == "all":
                return .all
            case .array(let items):
                var features: Feature = []
                for (index, item) in items.enumerated() {
                    guard case .string(let name) = item else {
                        throw fail("\(path)[\(index)]", item, expected: "a module name")
                    }
                    features.formUnion(moduleNames[name.lowercased()] ?? [])
                }
                return features
            default:
                throw fail(path, value, expected: "\"all\" or an array of module names")
            }
        }

        func readConstraint(_ value: JSONValue, path: String) throws(RemotePayloadError) -> IvyVersionConstraint {
            guard case .string(let text) = value else {
                throw fail(path, value, expected: "an Ivy version constraint string")
            }
            do {
                return try IvyVersionConstraint(text)
            } catch {
                throw fail(path, value, expected: "an Ivy version constraint (\(error.problem))")
            }
        }

        func readPredicate(_ value: JSONValue, path: String) throws(RemotePayloadError) -> AppVersionPredicate {
            let expected = "a predicate: {\"and\":[…]}, {\"or\":[…]}, {\"not\":…} or {\"scope\":…, \"value\":…}"
            guard case .object(let object) = value else { throw fail(path, value, expected: expected) }
            let forms = ["and", "or", "not", "value"].filter { object[$0] != nil }
            guard forms.count == 1 else { throw fail(path, value, expected: expected + ", exactly one of them") }
            switch forms[0] {
            case "and", "or":
                let listPath = "\(path).\(forms[0])"
                guard case .array(let items)? = object[forms[0]], !items.isEmpty else {
                    throw fail(listPath, object[forms[0]], expected: "a non-empty array of predicates")
                }
                var predicates: [AppVersionPredicate] = []
                for (index, item) in items.enumerated() {
                    predicates.append(try readPredicate(item, path: "\(listPath)[\(index)]"))
                }
                return forms[0] == "and" ? .and(predicates) : .or(predicates)
            case "not":
                let notPath = path + ".not"
                switch object["not"] {
                case .array(let items)? where items.count == 1:
                    return .not(try readPredicate(items[0], path: notPath + "[0]"))
                case .array?:
                    throw fail(notPath, object["not"], expected: "a predicate or an array of exactly one")
                case let item?:
                    return .not(try readPredicate(item, path: notPath))
                case nil:
                    throw fail(notPath, nil, expected: "a predicate")
                }
            default:
                return try readMatcher(object, path: path)
            }
        }

        func readMatcher(_ object: [String: JSONValue], path: String) throws(RemotePayloadError) -> AppVersionPredicate
        {
            var scope: [String]
            switch object["scope"] {
            case .string(let single)?: scope = [single]
            case .array(let items)?:
                scope = []
                for (index, item) in items.enumerated() {
                    guard case .string(let name) = item else {
                        throw fail("\(path).scope[\(index)]", item, expected: "a string")
                    }
                    scope.append(name)
                }
            default:
                throw fail(path + ".scope", object["scope"], expected: "a string or an array of strings")
            }
            if let key = object["key"] {
                guard case .string(let name) = key else { throw fail(path + ".key", key, expected: "a string") }
                scope.append(name)
            }
            let valuePath = path + ".value"
            guard case .object(let matcher)? = object["value"], matcher.count == 1,
                let (name, constraint) = matcher.first, name == "version_matches" || name == "version"
            else {
                throw fail(valuePath, object["value"], expected: "{\"version_matches\": CONSTRAINT}")
            }
            return .version(path: scope, try readConstraint(constraint, path: "\(valuePath).\(name)"))
        }
    }
}

/// An `app_versions` predicate over `{"<platform>":{"version":"<app version>"}}`.
indirect enum AppVersionPredicate: Sendable, Hashable {
    /// The value at `path` (scope, then key) is a string the constraint matches.
    case version(path: [String], IvyVersionConstraint)
    case and([AppVersionPredicate])
    case or([AppVersionPredicate])
    case not(AppVersionPredicate)

    func matches(platform: String, appVersion: String) -> Bool {
        switch self {
        case .version(let path, let constraint):
            // The only string in the document is at platform.version; any other path finds none.
            return path == [platform, "version"] && constraint.matches(appVersion)
        case .and(let predicates):
            return predicates.allSatisfy { $0.matches(platform: platform, appVersion: appVersion) }
        case .or(let predicates): return predicates.contains { $0.matches(platform: platform, appVersion: appVersion) }
        case .not(let predicate): return !predicate.matches(platform: platform, appVersion: appVersion)
        }
    }
}

/// Reads a payload for one target as `PrivacyManager` needs it: the remote layer's interpreter.
///
/// Give it to `RemoteLayerFile` with the app's platform, SDK version and app version. After an app update, the
/// kept payload is read again for the new version at start-up, so a rule that no longer matches is lifted then.
public struct RemoteConfigInterpreter: RemotePayloadInterpreter {
    /// Who the payload is read for.
    public let target: RemoteConfigTarget

    /// Creates the interpreter.
    public init(target: RemoteConfigTarget) {
        self.target = target
    }

    /// What `payload` disables for ``target``.
    ///
    /// - Throws: `RemotePayloadError`.
    public func disables(in payload: Data) throws -> RemoteDisables {
        try RemoteConfigParser.parse(payload, for: target).disables
    }
}
