import ConfigFuzzing

/// Turns fuzz bytes into an Airship remote-data payload: a response (`payloads`) or a bare app config, with
/// `disabled_features` names, `disable_features` rules (modules, Ivy constraints, nested `app_versions` predicates,
/// refresh intervals) and, now and then, a wrong type, a null, a near-miss name or a malformed constraint in any
/// of those places. Zero bytes give the plainest valid payload.
package struct RemotePayloadGenerator {
    private var input: FuzzInput

    static let types = [
        "app_config", "app_config:ios", "app_config:android", "app_config:amazon", "in_app_messages", "app_config:",
        "APP_CONFIG", "",
    ]
    static let timestamps = [
        "2018-09-20T18:29:35.523", "2024-01-01T00:00:00Z", "2024-01-01", "2024-13-01T00:00:00", "yesterday", "",
        "2024-01-01T24:00:00", "2024-01-01T10:00+05:30", "2024-01-01T10:00:00.",
    ]
    static let names = [
        "push", "contacts", "message_center", "analytics", "tags_and_attributes", "in_app_automation",
        "feature_flags", "all", "none", "PUSH", "Analytics", "pushh", "chat", "", " push",
    ]
    static let modules = [
        "push", "analytics", "message_center", "in_app_v2", "automation", "contact", "named_user", "channel",
        "location", "chat", "preference_center", "experiment", "all", "Push", "",
    ]
    static let constraints = [
        "+", "1.0", "1.0+", "1.0.+", "[1.0,2.0]", "[1.0,2.0[", "]1.0,2.0]", "]1.0,2.0[", "[1.0,)", "]1.0,)",
        "(,2.0]", "(,2.0[", " [ 1.0 , 2.0 ] ", "1.0-beta", "[1.0-alpha,2.0-rc1]", "17.+", "[17.0,18.0[", "1.a", "",
        "(,)", "[,2.0]", "(1.0,2.0]", "[1.0,2.0,3.0]", "[1.0,2.0]x", "1.", "1..0", "-1", "1.0-", "++",
        "[99999999999999999999999,)",
    ]
    static let numbers = ["0", "10", "60.5", "-1", "1e400", "1e308", "true", "\"10\"", "null", "[]"]

    /// The payload a recipe describes.
    package static func document(from recipe: some Collection<UInt8>) -> [UInt8] {
        var generator = RemotePayloadGenerator(input: FuzzInput(recipe))
        return Array(generator.document().utf8)
    }

    private mutating func document() -> String {
        if input.chance(70) {
            var payloads: [String] = []
            repeat { payloads.append(payload()) } while input.chance(55) && payloads.count < 6
            return #"{"ok":true,"payloads":[\#(payloads.joined(separator: ","))]}"#
        }
        return appConfig(depth: 0)
    }

    private mutating func payload() -> String {
        if input.chance(4) { return junk() }
        var members: [String] = []
        if !input.chance(5) { members.append(#""type":\#(input.chance(4) ? junk() : quoted(input.pick(Self.types)))"#) }
        if !input.chance(5) {
            members.append(#""timestamp":\#(input.chance(4) ? junk() : quoted(input.pick(Self.timestamps)))"#)
        }
        if !input.chance(5) { members.append(#""data":\#(input.chance(4) ? junk() : appConfig(depth: 0))"#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    private mutating func appConfig(depth: Int) -> String {
        var members: [String] = []
        if input.chance(70) {
            members.append(
                #""disabled_features":\#(input.chance(8) ? junk() : list { $0.quoted($0.input.pick(Self.names)) })"#)
        }
        if input.chance(70) {
            members.append(#""disable_features":\#(input.chance(8) ? junk() : list { $0.rule() })"#)
        }
        if input.chance(15) { members.append(#""other":\#(junk())"#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    private mutating func rule() -> String {
        if input.chance(4) { return junk() }
        var members: [String] = []
        if input.chance(75) {
            let modules =
                input.chance(20)
                ? quoted("all") : input.chance(6) ? junk() : list { $0.quoted($0.input.pick(Self.modules)) }
            members.append(#""modules":\#(modules)"#)
        }
        if input.chance(50) {
            members.append(#""sdk_versions":\#(input.chance(5) ? junk() : list { $0.quoted($0.constraint()) })"#)
        }
        if input.chance(50) { members.append(#""app_versions":\#(predicate(depth: 0))"#) }
        if input.chance(25) { members.append(#""remote_data_refresh_interval":\#(input.pick(Self.numbers))"#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    private mutating func predicate(depth: Int) -> String {
        let form = depth > 4 ? 3 : input.below(6)
        switch form {
        case 0, 1:
            return #"{"\#(form == 0 ? "and" : "or")":\#(list { $0.predicate(depth: depth + 1) })}"#
        case 2:
            let inner = predicate(depth: depth + 1)
            return input.chance(50) ? #"{"not":\#(inner)}"# : #"{"not":[\#(inner)]}"#
        case 3, 4:
            let platform = input.pick(["ios", "android", "amazon"])
            let scope =
                input.chance(50) ? #"["\#(platform)","version"]"# : #""\#(platform)","key":"version""#
            let matcher = input.pick(["version_matches", "version", "equals"])
            let value = input.chance(8) ? junk() : quoted(constraint())
            return #"{"scope":\#(scope),"value":{"\#(matcher)":\#(value)}}"#
        default:
            return junk()
        }
    }

    private mutating func constraint() -> String {
        guard input.chance(30) else { return input.pick(Self.constraints) }
        let open = input.pick(["[", "]", "(", ""])
        let close = input.pick(["]", "[", ")", ""])
        return open + version() + input.pick([",", ", ", ",,", ""]) + version() + close
    }

    private mutating func version() -> String {
        var parts: [String] = []
        repeat {
            parts.append(input.pick(["0", "1", "2", "17", "007", "", "a"]))
        } while input.chance(50) && parts.count < 5
        return parts.joined(separator: ".") + (input.chance(15) ? input.pick(["-beta", "-", "-rc1+"]) : "")
    }

    private mutating func list(_ element: (inout RemotePayloadGenerator) -> String) -> String {
        var items: [String] = []
        while input.chance(60) && items.count < 5 { items.append(element(&self)) }
        return "[" + items.joined(separator: ",") + "]"
    }

    private mutating func junk() -> String { input.pick(["null", "3", "true", "\"x\"", "[]", "{}", "[null]", "-0.5"]) }

    private func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
