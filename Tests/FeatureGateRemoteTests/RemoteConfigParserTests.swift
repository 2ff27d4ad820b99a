import FeatureGate
import FeatureGateRemote
import Foundation
import Testing

/// The payload parser: both formats, the platform merge, the legacy rules, and every invalid form.
@Suite struct RemoteConfigParserTests {
    static let ios = RemoteConfigTarget(platform: .ios, sdkVersion: "17.2.0", appVersion: "1.0.3")
    static let android = RemoteConfigTarget(platform: .android, sdkVersion: "17.2.0", appVersion: "1.0.3")

    func parse(_ json: String, for target: RemoteConfigTarget = ios) throws(RemotePayloadError) -> RemoteConfigDecision
    {
        try RemoteConfigParser.parse(Data(json.utf8), for: target)
    }

    func disabled(_ json: String, for target: RemoteConfigTarget = ios) throws -> Feature {
        try parse(json, for: target).disables.features
    }

    /// The key path of the error `json` is refused with.
    func refusal(_ json: String, for target: RemoteConfigTarget = ios) -> String? {
        do {
            _ = try parse(json, for: target)
            return nil
        } catch {
            return error.keyPath
        }
    }

    static func response(_ payloads: String...) -> String {
        #"{"ok":true,"payloads":["# + payloads.joined(separator: ",") + "]}"
    }

    static func payload(_ type: String, _ data: String, timestamp: String = "2018-09-20T18:29:35.523") -> String {
        #"{"type":"\#(type)","timestamp":"\#(timestamp)","data":\#(data)}"#
    }

    // MARK: - disabled_features

    @Test func disabledFeaturesNamesFlagsCaseInsensitively() throws {
        #expect(
            try disabled(#"{"disabled_features":["Push","ANALYTICS","tags_and_attributes"]}"#) == [
                .push, .analytics, .tagsAndAttributes,
            ])
        #expect(try disabled(#"{"disabled_features":["all"]}"#) == .all)
        #expect(try disabled(#"{"disabled_features":["none"]}"#) == [])
        #expect(try disabled(#"{"disabled_features":null}"#) == [])
        #expect(try disabled("{}") == [])
    }

    @Test func everyBuiltInNameIsRead() throws {
        for entry in FeatureCatalog.builtIn.entries {
            #expect(try disabled(#"{"disabled_features":["\#(entry.name)"]}"#) == entry.feature)
        }
    }

    @Test func anUnknownNameRefusesThePayload() {
        #expect(refusal(#"{"disabled_features":["push","chat"]}"#) == "disabled_features[1]")
        #expect(refusal(#"{"disabled_features":["push",3]}"#) == "disabled_features[1]")
        #expect(refusal(#"{"disabled_features":"push"}"#) == "disabled_features")
    }

    @Test func theReasonNamesTheEntry() throws {
        let decision = try parse(#"{"disabled_features":["analytics","push"]}"#)
        #expect(decision.disables.rule(for: .push) == #"disabled_features[1] "push""#)
        #expect(decision.disables.rule(for: .analytics) == #"disabled_features[0] "analytics""#)
        #expect(decision.disables.rule(for: .contacts) == nil)
    }

    // MARK: - Legacy disable_features

    @Test func modulesMapToFlagsAndUnknownModulesAreIgnored() throws {
        let json =
            #"{"disable_features":[{"modules":["push","analytics","message_center","in_app_v2","contact","channel","location","chat","preference_center","experiment","future_thing"]}]}"#
        #expect(try disabled(json) == [.push, .analytics, .messageCenter, .inAppAutomation, .contacts])
        #expect(
            try disabled(#"{"disable_features":[{"modules":["automation","named_user"]}]}"#) == [
                .inAppAutomation, .contacts,
            ])
        #expect(try disabled(#"{"disable_features":[{"modules":"all"}]}"#) == .all)
        #expect(try disabled(#"{"disable_features":[{"sdk_versions":["+"]}]}"#) == [])
    }

    @Test func aRuleAppliesOnlyWhenEveryConstraintMatches() throws {
        let rule =
            #"{"disable_features":[{"modules":["push"],"sdk_versions":["SDK"],"app_versions":{"scope":["ios","version"],"value":{"version_matches":"APP"}}}]}"#
        func with(_ sdk: String, _ app: String) -> String {
            rule.replacingOccurrences(of: "SDK", with: sdk).replacingOccurrences(of: "APP", with: app)
        }
        #expect(try disabled(with("17.+", "1.0.+")) == .push)
        #expect(try disabled(with("16.+", "1.0.+")) == [])
        #expect(try disabled(with("17.+", "[2.0,)")) == [])
        #expect(try disabled(with("17.+", "1.0.+"), for: Self.android) == [])
    }

    @Test func sdkVersionsMatchIfAnyConstraintMatches() throws {
        #expect(
            try disabled(#"{"disable_features":[{"modules":["push"],"sdk_versions":["1.0","[17.0,18.0["]}]}"#) == .push)
        #expect(try disabled(#"{"disable_features":[{"modules":["push"],"sdk_versions":["1.0","2.+"]}]}"#) == [])
    }

    @Test func appVersionPredicatesCombine() throws {
        func predicate(_ json: String) throws -> Feature {
            try disabled(#"{"disable_features":[{"modules":["push"],"app_versions":"# + json + "}]}")
        }
        let matches = #"{"scope":["ios","version"],"value":{"version_matches":"1.0.+"}}"#
        let fails = #"{"scope":["ios","version"],"value":{"version_matches":"2.+"}}"#
        #expect(try predicate(matches) == .push)
        #expect(try predicate(#"{"scope":"ios","key":"version","value":{"version":"1.0.3"}}"#) == .push)
        #expect(try predicate(#"{"and":[\#(matches),\#(fails)]}"#) == [])
        #expect(try predicate(#"{"or":[\#(fails),\#(matches)]}"#) == .push)
        #expect(try predicate(#"{"not":\#(fails)}"#) == .push)
        #expect(try predicate(#"{"not":[\#(matches)]}"#) == [])
        // A path that finds no string never matches: the platform alone, the other platform, an extra key.
        #expect(try predicate(#"{"scope":["ios"],"value":{"version_matches":"+"}}"#) == [])
        #expect(try predicate(#"{"scope":["android","version"],"value":{"version_matches":"+"}}"#) == [])
        #expect(try predicate(#"{"scope":["ios","version"],"key":"major","value":{"version_matches":"+"}}"#) == [])
        #expect(try predicate(#"{"not":{"scope":["android","version"],"value":{"version_matches":"+"}}}"#) == .push)
    }

    @Test func theUnionOfNamesAndApplyingRulesIsDisabled() throws {
        let json =
            #"{"disabled_features":["analytics"],"disable_features":[{"modules":["push"]},{"modules":["contact"],"sdk_versions":["1.0"]}]}"#
        let decision = try parse(json)
        #expect(decision.disables.features == [.analytics, .push])
        #expect(decision.disables.rule(for: .push) == "disable_features[0]")
        #expect(decision.rules.map(\.applies) == [true, false])
    }

    @Test func theRefreshIntervalIsTheLargestOfTheApplyingRules() throws {
        let json =
            #"{"disable_features":[{"remote_data_refresh_interval":30},{"remote_data_refresh_interval":600,"sdk_versions":["1.0"]},{"remote_data_refresh_interval":90.5}]}"#
        #expect(try parse(json).disables.refreshInterval == 90.5)
        #expect(try parse("{}").disables.refreshInterval == nil)
    }

    @Test func otherRuleKeysAreIgnored() throws {
        #expect(
            try disabled(#"{"disable_features":[{"modules":["push"],"comment":"leak","future":{"x":1}}]}"#) == .push)
    }

    // MARK: - Responses and the merge

    @Test func aResponseReadsOnlyTheAppConfigsOfThePlatform() throws {
        let json = Self.response(
            Self.payload("app_config", #"{"disabled_features":["analytics"]}"#),
            Self.payload("app_config:android", #"{"disabled_features":["push"]}"#),
            Self.payload("app_config:amazon", #"{"disabled_features":["contacts"]}"#),
            Self.payload("in_app_messages", #"{"disabled_features":["feature_flags"],"anything":[1,2]}"#))
        #expect(try disabled(json) == .analytics)
        #expect(try disabled(json, for: Self.android) == .push)
        #expect(try parse(json).isResponse)
    }

    @Test func thePlatformPayloadWinsKeyByKeyWhateverTheOrder() throws {
        let common = Self.payload(
            "app_config", #"{"disabled_features":["analytics","push"],"disable_features":[{"modules":["contact"]}]}"#)
        let specific = Self.payload("app_config:ios", #"{"disabled_features":["message_center"]}"#)
        for json in [Self.response(common, specific), Self.response(specific, common)] {
            // Lists are replaced, not unioned; keys the platform payload lacks come from the common one.
            #expect(try disabled(json) == [.messageCenter, .contacts])
        }
    }

    @Test func aPlatformNullRemovesTheKey() throws {
        let json = Self.response(
            Self.payload("app_config", #"{"disabled_features":["chat"],"disable_features":[{"modules":["push"]}]}"#),
            Self.payload("app_config:ios", #"{"disabled_features":null}"#))
        // Validation applies to the merged result: the common payload's invalid name is gone.
        #expect(try disabled(json) == .push)
        #expect(refusal(json, for: Self.android) == "disabled_features[0]")
    }

    @Test func anErrorInAMergedKeyNamesThePayloadItCameFrom() {
        let json = Self.response(
            Self.payload("in_app_messages", "{}"),
            Self.payload("app_config:ios", #"{"disable_features":[{"sdk_versions":[]}]}"#))
        do {
            _ = try parse(json)
            Issue.record("an empty sdk_versions was accepted")
        } catch {
            #expect(error.keyPath == "disable_features[0].sdk_versions")
            #expect(error.source == "payloads[1] app_config:ios")
        }
    }

    @Test func aResponseWithoutAppConfigDisablesNothing() throws {
        #expect(try disabled(Self.response()) == [])
        #expect(try disabled(Self.response(Self.payload("in_app_messages", "{}"))) == [])
    }

    @Test(arguments: [
        "2018-09-20T18:29:35.523", "2018-09-20T18:29:35Z", "2018-09-20T18:29:35.5+02:00", "2018-09-20T18:29-0500",
        "2018-09-20", "2018-09-20 18:29:35",
    ])
    func iso8601TimestampsAreAccepted(_ timestamp: String) {
        #expect(refusal(Self.response(Self.payload("app_config", "{}", timestamp: timestamp))) == nil)
    }

    // MARK: - Invalid forms

    @Test(arguments: [
        // The response's structure.
        (#"{"payloads":{}}"#, "payloads"),
        (#"{"payloads":null}"#, "payloads"),
        (#"{"payloads":[3]}"#, "payloads[0]"),
        (#"{"payloads":[{"timestamp":"2018-09-20T18:29:35","data":{}}]}"#, "payloads[0].type"),
        (#"{"payloads":[{"type":1,"timestamp":"2018-09-20T18:29:35","data":{}}]}"#, "payloads[0].type"),
        (#"{"payloads":[{"type":"x","data":{}}]}"#, "payloads[0].timestamp"),
        (#"{"payloads":[{"type":"x","timestamp":"yesterday","data":{}}]}"#, "payloads[0].timestamp"),
        (#"{"payloads":[{"type":"x","timestamp":"2018-13-20T18:29:35","data":{}}]}"#, "payloads[0].timestamp"),
        (#"{"payloads":[{"type":"x","timestamp":1537468175,"data":{}}]}"#, "payloads[0].timestamp"),
        (#"{"payloads":[{"type":"x","timestamp":"2018-09-20T18:29:35"}]}"#, "payloads[0].data"),
        (#"{"payloads":[{"type":"x","timestamp":"2018-09-20T18:29:35","data":[]}]}"#, "payloads[0].data"),
        (
            #"{"payloads":[{"type":"app_config","timestamp":"2018-09-20","data":{}},{"type":"app_config","timestamp":"2018-09-20","data":{}}]}"#,
            "payloads[1].type"
        ),
        // The top level.
        ("[]", ""), ("\"push\"", ""), ("null", ""), ("{", ""), ("", ""), (#"{"a":1}x"#, ""),
        // Names.
        (#"{"disabled_features":{}}"#, "disabled_features"),
        (#"{"disabled_features":["push",null]}"#, "disabled_features[1]"),
        // Rules.
        (#"{"disable_features":{}}"#, "disable_features"),
        (#"{"disable_features":["push"]}"#, "disable_features[0]"),
        (#"{"disable_features":[{"modules":"push"}]}"#, "disable_features[0].modules"),
        (#"{"disable_features":[{"modules":[1]}]}"#, "disable_features[0].modules[0]"),
        (#"{"disable_features":[{"modules":{}}]}"#, "disable_features[0].modules"),
        (#"{"disable_features":[{"sdk_versions":[]}]}"#, "disable_features[0].sdk_versions"),
        (#"{"disable_features":[{"sdk_versions":"1.0"}]}"#, "disable_features[0].sdk_versions"),
        (#"{"disable_features":[{"sdk_versions":[1.0]}]}"#, "disable_features[0].sdk_versions[0]"),
        (#"{"disable_features":[{"sdk_versions":["+","1.a"]}]}"#, "disable_features[0].sdk_versions[1]"),
        // A malformed constraint refuses the payload even in a rule that would not apply.
        (
            #"{"disable_features":[{"sdk_versions":["1.0"],"app_versions":{"scope":["ios","version"],"value":{"version_matches":"(,)"}}}]}"#,
            "disable_features[0].app_versions.value.version_matches"
        ),
        (
            #"{"disable_features":[{"remote_data_refresh_interval":"10"}]}"#,
            "disable_features[0].remote_data_refresh_interval"
        ),
        (
            #"{"disable_features":[{"remote_data_refresh_interval":-1}]}"#,
            "disable_features[0].remote_data_refresh_interval"
        ),
        (
            #"{"disable_features":[{"remote_data_refresh_interval":true}]}"#,
            "disable_features[0].remote_data_refresh_interval"
        ),
        // Predicates.
        (#"{"disable_features":[{"app_versions":"1.0"}]}"#, "disable_features[0].app_versions"),
        (#"{"disable_features":[{"app_versions":{}}]}"#, "disable_features[0].app_versions"),
        (#"{"disable_features":[{"app_versions":{"and":[]}}]}"#, "disable_features[0].app_versions.and"),
        (#"{"disable_features":[{"app_versions":{"or":{}}}]}"#, "disable_features[0].app_versions.or"),
        (#"{"disable_features":[{"app_versions":{"and":[{}],"or":[{}]}}]}"#, "disable_features[0].app_versions"),
        (#"{"disable_features":[{"app_versions":{"not":[]}}]}"#, "disable_features[0].app_versions.not"),
        (#"{"disable_features":[{"app_versions":{"not":3}}]}"#, "disable_features[0].app_versions.not"),
        (
            #"{"disable_features":[{"app_versions":{"and":[{"not":{"value":{"version":"1.0"}}}]}}]}"#,
            "disable_features[0].app_versions.and[0].not.scope"
        ),
        (
            #"{"disable_features":[{"app_versions":{"scope":[1],"value":{"version":"1.0"}}}]}"#,
            "disable_features[0].app_versions.scope[0]"
        ),
        (
            #"{"disable_features":[{"app_versions":{"scope":"ios","key":2,"value":{"version":"1.0"}}}]}"#,
            "disable_features[0].app_versions.key"
        ),
        (
            #"{"disable_features":[{"app_versions":{"scope":"ios","value":{"equals":"1.0"}}}]}"#,
            "disable_features[0].app_versions.value"
        ),
        (
            #"{"disable_features":[{"app_versions":{"scope":"ios","value":{"version":"1.0","equals":"1.0"}}}]}"#,
            "disable_features[0].app_versions.value"
        ),
        (
            #"{"disable_features":[{"app_versions":{"scope":"ios","value":"1.0"}}]}"#,
            "disable_features[0].app_versions.value"
        ),
        (
            #"{"disable_features":[{"app_versions":{"scope":"ios","value":{"version":1}}}]}"#,
            "disable_features[0].app_versions.value.version"
        ),
    ])
    func invalidPayloadsAreRefusedWithTheirKeyPath(_ json: String, _ keyPath: String) {
        #expect(refusal(json) == keyPath)
    }

    @Test func nonUTF8AndOversizedPayloadsAreRefused() {
        #expect(throws: RemotePayloadError.self) {
            try RemoteConfigParser.parse(Data([0x7B, 0xFF, 0x7D]), for: Self.ios)
        }
        var huge = Data(#"{"x":""#.utf8)
        huge.append(Data(repeating: UInt8(ascii: "a"), count: RemoteConfigParser.maximumSize))
        huge.append(Data(#""}"#.utf8))
        do {
            _ = try RemoteConfigParser.parse(huge, for: Self.ios)
            Issue.record("an oversized payload was accepted")
        } catch {
            #expect(error.keyPath == "" && error.found.contains("bytes"))
        }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let json =
            #"{"disable_features":[{"app_versions":"# + String(repeating: #"{"not":"#, count: 5000)
            + #"{"scope":"ios","value":{"version":"1"}}"# + String(repeating: "}", count: 5000) + "}]}"
        #expect(refusal(json) != nil)
    }

    @Test func theErrorSaysWhatWasFoundAndExpected() {
        do {
            _ = try parse(#"{"disabled_features":["push","chat"]}"#)
        } catch {
            #expect(error.description.hasPrefix(#"disabled_features[1]: found a string "chat", expected one of"#))
        }
    }
}
