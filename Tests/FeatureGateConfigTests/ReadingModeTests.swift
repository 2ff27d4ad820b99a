import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// What strict, lenient and Airship-compatible reading do with unknown names and a missing `enabledFeatures`.
@Suite struct ReadingModeTests {
    @Test func strictRejectsAnUnknownNameWithItsKeyPathAndTheClosestName() throws {
        let error = try #require(readError(Data(json(enabled: #"["push", "analytics", "anlytics"]"#).utf8)))
        #expect(
            error.description
                == #"c: error: enabledFeatures[2]: line 1: unknown feature name "anlytics"; did you mean "analytics"?"#)
        #expect(error.kind == .unknownName)
        #expect(error.keyPath == "enabledFeatures[2]")
        #expect(error.line == 1)
        #expect(error.found == #""anlytics""#)
        #expect(error.suggestion == "analytics")
        #expect(
            error.expected
                == "in_app_automation, message_center, push, analytics, tags_and_attributes, contacts, feature_flags, all, none"
        )
        #expect(error.format == .json)
    }

    @Test(
        arguments: [
            ("inAppAutomation", "in_app_automation"), ("in-app-automation", "in_app_automation"),
            ("messagecenter", "message_center"), ("pushh", "push"), ("feature_flag", "feature_flags"),
            ("tags", nil), ("crash_reports", nil), ("alll", "all"), ("non", "none"),
        ] as [(String, String?)])
    func theSuggestionIsTheClosestValidName(name: String, suggestion: String?) throws {
        let error = try #require(readError(Data(json(enabled: "[\"\(name)\"]").utf8)))
        #expect(error.suggestion == suggestion)
        if suggestion == nil {
            #expect(
                error.description
                    == #"c: error: enabledFeatures[0]: line 1: unknown feature name "\#(name)": expected one of in_app_automation, message_center, push, analytics, tags_and_attributes, contacts, feature_flags, all, none"#
            )
        }
    }

    @Test func suggestionsIncludeRegisteredFlags() throws {
        let error = try #require(readError(Data(json(enabled: #""crash_report""#).utf8), catalog: customCatalog))
        #expect(error.suggestion == "crash_reports")
        #expect(
            error.description
                == #"c: error: enabledFeatures: line 1: unknown feature name "crash_report"; did you mean "crash_reports"?"#
        )
    }

    @Test func strictReportsEveryUnknownNameNotJustTheFirst() {
        let result = outcome(json(enabled: #""pusj, analytics, contactz""#))
        #expect(result.features == nil)
        #expect(
            result.lines == [
                #"c: error: enabledFeatures: line 1: unknown feature name "pusj" (item 1 of 3); did you mean "push"?"#,
                #"c: error: enabledFeatures: line 1: unknown feature name " contactz" (item 3 of 3); did you mean "contacts"?"#,
            ])
    }

    @Test(arguments: [ConfigReadingMode.lenient, .airshipCompatible])
    func lenientModesDropUnknownNamesWithAWarning(mode: ConfigReadingMode) {
        let result = outcome(json(enabled: #"["push", "anlytics", "future_flag"]"#), mode)
        #expect(result.features == .push)
        #expect(
            result.lines == [
                #"c: warning: enabledFeatures[1]: line 1: unknown feature name "anlytics" ignored; did you mean "analytics"?"#,
                #"c: warning: enabledFeatures[2]: line 1: unknown feature name "future_flag" ignored; did you mean "feature_flags"?"#,
            ])
    }

    @Test(arguments: ConfigReadingMode.allCases)
    func noModeFallsBackToAllBecauseOfAnUnknownName(mode: ConfigReadingMode) {
        for value in [#"["everything"]"#, #""xyz""#, #"["alll"]"#, #"["chat"]"#] {
            let result = outcome(json(enabled: value), mode)
            #expect(result.features == nil || result.features == [], "\(mode) \(value)")
        }
    }

    @Test(arguments: [ConfigReadingMode.strict, .lenient])
    func aMissingEnabledFeaturesIsAnErrorThatSaysWhatToWrite(mode: ConfigReadingMode) throws {
        let result = outcome(#"{"productionAppKey": "k"}"#, mode)
        #expect(result.features == nil)
        #expect(
            result.lines == [
                #"c: error: enabledFeatures: missing. Airship enables every feature when it is missing (--airship reads the file as Airship does); write ["all"] to keep that. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones: push, analytics and in-app messages stop for users who never changed a setting"#
            ])
        let error = try #require(readError(Data("{}".utf8), mode))
        #expect(error.kind == .missingKey)
        #expect(error.found == nil)
        #expect(error.expected == #"["all"] for Airship's default, or [] for default-off"#)
    }

    @Test func airshipCompatibleModeReadsAMissingEnabledFeaturesAsAllWithAWarning() {
        let result = outcome(
            #"{"productionAppKey": "k", "resetEnabledFeatures": true}"#, .airshipCompatible, catalog: customCatalog)
        #expect(result.features == Feature.all.union(crashReports))
        #expect(result.reset == true)
        #expect(
            result.lines == [
                "c: warning: resetEnabledFeatures: line 1: true: every launch discards the choices the app and the user made and applies enabledFeatures again, keeping only their refusals (consent refusals, and the flags revoke-all turned off)",
                #"c: warning: enabledFeatures: missing, so every feature is enabled, as Airship does; write ["all"] to say so. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones"#,
            ])
    }

    @Test(arguments: ConfigReadingMode.allCases)
    func aMisspelledEnabledFeaturesKeyIsAnErrorInEveryMode(mode: ConfigReadingMode) {
        for key in ["EnabledFeatures", "enabled_features", "enabledFeature", "enabledfeatures", "Enabled-Features"] {
            let result = outcome("{\"\(key)\": [\"push\"]}", mode)
            #expect(result.features == nil, "\(key) in \(mode)")
            #expect(
                result.lines == [
                    #"c: error: \#(key): line 1: unknown key "\#(key)"; did you mean "enabledFeatures"? Keys are case-sensitive, and enabledFeatures is missing"#
                ])
        }
    }

    @Test func aLookAlikeKeyNextToTheRealOneIsIgnoredWithAWarning() {
        let result = outcome(#"{"enabledFeatures": [], "enabled_features": ["push"], "resetEnabledFeature": true}"#)
        #expect(result.features == [])
        #expect(result.reset == false)
        #expect(
            result.lines == [
                #"c: warning: enabled_features: line 1: unknown key "enabled_features" ignored; did you mean "enabledFeatures"? Only enabledFeatures is read"#,
                #"c: warning: resetEnabledFeature: line 1: unknown key "resetEnabledFeature" ignored; did you mean "resetEnabledFeatures"? Keys are case-sensitive, and resetEnabledFeatures is read as false"#,
            ])
    }

    @Test func keysFarFromEnabledFeaturesAreNotTakenForIt() {
        let result = outcome(#"{"disabledFeatures": ["push"]}"#, .airshipCompatible)
        #expect(result.features == .all)
        #expect(result.lines.count == 1)
    }

    @Test func aMisspelledResetKeyIsAWarningAndResetStaysFalse() {
        let result = outcome(#"{"enabledFeatures": [], "ResetEnabledFeatures": true}"#)
        #expect(result.features == [])
        #expect(result.reset == false)
        #expect(
            result.lines == [
                #"c: warning: ResetEnabledFeatures: line 1: unknown key "ResetEnabledFeatures" ignored; did you mean "resetEnabledFeatures"? Keys are case-sensitive, and resetEnabledFeatures is read as false"#
            ])
    }

    @Test(arguments: ConfigReadingMode.allCases)
    func wrongTypesAreErrorsInEveryMode(mode: ConfigReadingMode) {
        #expect(outcome(json(enabled: "true"), mode).features == nil)
        #expect(outcome(json(enabled: "[1]"), mode).features == nil)
        #expect(outcome(#"{"enabledFeatures": [], "resetEnabledFeatures": 1}"#, mode).features == nil)
    }
}
