import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// Every form `enabledFeatures` and `resetEnabledFeatures` accept, with the exact warnings each gives.
@Suite struct AcceptedFormsTests {
    @Test func anArrayOfNamesEnablesExactlyThoseNames() {
        let result = outcome(json(enabled: #"["push", "analytics"]"#))
        #expect(result == Outcome(features: [.push, .analytics], reset: false, format: .json, lines: []))
    }

    @Test func namesIgnoreASCIICaseAndSurroundingWhitespace() {
        let result = outcome(json(enabled: #"[" PUSH ", "\tAnalytics\n", "In_App_Automation"]"#))
        #expect(
            result == Outcome(features: [.push, .analytics, .inAppAutomation], reset: false, format: .json, lines: []))
    }

    @Test func everyBuiltInNameIsAccepted() {
        let names = FeatureCatalog.builtIn.entries.map { "\"\($0.name)\"" }.joined(separator: ",")
        #expect(outcome(json(enabled: "[\(names)]")).features == .all)
    }

    @Test func lettersFromOtherScriptsAreNotFoldedIntoNames() {
        // A Kelvin sign lowercases to "k" in Unicode; the reader folds ASCII only, so this stays unknown.
        let result = outcome(json(enabled: #"["PUSH\u212A"]"#))
        #expect(result.features == nil)
        #expect(
            result.lines == [
                #"c: error: enabledFeatures[0]: line 1: unknown feature name "PUSH\#u{212A}"; did you mean "push"?"#
            ])
    }

    @Test func allEnablesEveryFlagOfTheCatalogIncludingRegisteredOnes() {
        #expect(outcome(json(enabled: #"["all"]"#)).features == .all)
        #expect(outcome(json(enabled: #"["ALL"]"#), catalog: customCatalog).features == Feature.all.union(crashReports))
        #expect(outcome(json(enabled: #""all""#), catalog: customCatalog).features == Feature.all.union(crashReports))
        #expect(outcome(json(enabled: #"["push", "all"]"#)).features == .all)
    }

    @Test func noneAloneEnablesNothingWithoutAWarning() {
        #expect(outcome(json(enabled: #"["none"]"#)) == Outcome(features: [], reset: false, format: .json, lines: []))
        #expect(outcome(json(enabled: #""None""#)) == Outcome(features: [], reset: false, format: .json, lines: []))
        #expect(outcome(json(enabled: "[]")) == Outcome(features: [], reset: false, format: .json, lines: []))
    }

    @Test func noneNextToOtherNamesLeavesThemEnabledWithAWarning() {
        let result = outcome(json(enabled: #"["push", "none", "analytics"]"#))
        #expect(result.features == [.push, .analytics])
        #expect(
            result.lines == [
                #"c: warning: enabledFeatures[1]: line 1: "none" next to other names turns nothing off; the other names still count"#
            ])
        let list = outcome(json(enabled: #""none, push""#))
        #expect(list.features == .push)
        #expect(
            list.lines == [
                #"c: warning: enabledFeatures: line 1: "none" next to other names turns nothing off; the other names still count"#
            ])
    }

    @Test func aCommaSeparatedStringIsTheAirship16Form() {
        let result = outcome(json(enabled: #""push, analytics ,MESSAGE_CENTER""#))
        #expect(
            result == Outcome(features: [.push, .analytics, .messageCenter], reset: false, format: .json, lines: []))
        #expect(outcome(json(enabled: #""feature_flags""#)).features == .featureFlags)
    }

    @Test func emptyItemsOfACommaSeparatedStringAreDroppedWithAWarning() {
        let result = outcome(json(enabled: #""push,, analytics,""#))
        #expect(result.features == [.push, .analytics])
        #expect(
            result.lines == [
                "c: warning: enabledFeatures: line 1: empty feature name (item 2 of 4) ignored",
                "c: warning: enabledFeatures: line 1: empty feature name (item 4 of 4) ignored",
            ])
    }

    @Test func anEmptyStringEnablesNothingWithAWarning() {
        let result = outcome(json(enabled: #"" ""#))
        #expect(result.features == [])
        #expect(
            result.lines == [
                "c: warning: enabledFeatures: line 1: an empty string enables no features; write [] to say so"
            ])
    }

    @Test func anEmptyArrayElementIsDroppedWithAWarning() {
        let result = outcome(json(enabled: #"["push", "  "]"#))
        #expect(result.features == .push)
        #expect(result.lines == ["c: warning: enabledFeatures[1]: line 1: empty feature name ignored"])
    }

    @Test func anIntegerBitmaskIsTheAirshipAndroidForm() {
        #expect(
            outcome(json(enabled: "21"))
                == Outcome(features: [.inAppAutomation, .push, .analytics], reset: false, format: .json, lines: []))
        #expect(outcome(json(enabled: "0")).features == [])
        #expect(outcome(json(enabled: "375")).features == .all)
    }

    @Test func aBitmaskIsMaskedToTheCatalogWithAWarningNamingTheDroppedBits() {
        let result = outcome(json(enabled: "255"))
        #expect(
            result.features == [.inAppAutomation, .messageCenter, .push, .analytics, .tagsAndAttributes, .contacts])
        #expect(
            result.lines == [
                "c: warning: enabledFeatures: line 1: bits 3 (retired chat), 7 (retired location) are not known features and were dropped from 255"
            ])
        let high = outcome(json(enabled: "65552"))
        #expect(high.features == .analytics)
        #expect(
            high.lines == [
                "c: warning: enabledFeatures: line 1: bit 16 is not a known feature and was dropped from 65552"
            ])
        #expect(
            outcome(json(enabled: "65552"), catalog: customCatalog)
                == Outcome(features: [.analytics, crashReports], reset: false, format: .json, lines: []))
        let top = outcome(json(enabled: "18446744073709551615"))
        #expect(top.features == .all)
        #expect(top.lines.count == 1)
        #expect(top.lines.first?.contains("bits 3 (retired chat), 7 (retired location), 9, 10,") == true)
    }

    @Test func registeredFlagsAreAcceptedByName() {
        let result = outcome(json(enabled: #"["Crash_Reports", "push"]"#), catalog: customCatalog)
        #expect(result == Outcome(features: [crashReports, .push], reset: false, format: .json, lines: []))
        // Without the registration the name is unknown.
        #expect(outcome(json(enabled: #"["crash_reports"]"#)).features == nil)
    }

    @Test(arguments: ConfigReadingMode.allCases)
    func retiredAirshipNamesAreDroppedWithAWarningInEveryMode(mode: ConfigReadingMode) {
        let result = outcome(json(enabled: #"["chat", "push", " LOCATION "]"#), mode)
        #expect(result.features == .push)
        #expect(
            result.lines == [
                #"c: warning: enabledFeatures[0]: line 1: "chat" is a feature Airship retired; ignored"#,
                #"c: warning: enabledFeatures[2]: line 1: "location" is a feature Airship retired; ignored"#,
            ])
        let only = outcome(json(enabled: #""chat""#), mode)
        #expect(only.features == [])
        #expect(only.lines == [#"c: warning: enabledFeatures: line 1: "chat" is a feature Airship retired; ignored"#])
    }

    @Test func resetEnabledFeaturesIsABooleanThatDefaultsToFalse() {
        #expect(outcome(#"{"enabledFeatures": [], "resetEnabledFeatures": true}"#).reset == true)
        #expect(outcome(#"{"enabledFeatures": [], "resetEnabledFeatures": false}"#).reset == false)
        #expect(outcome(#"{"enabledFeatures": []}"#).reset == false)
        #expect(
            outcome(plist("<key>enabledFeatures</key><array/><key>resetEnabledFeatures</key><true/>")).reset == true)
        #expect(
            outcome(plist("<key>enabledFeatures</key><array/><key>resetEnabledFeatures</key><false></false>")).reset
                == false)
    }

    @Test func otherTopLevelKeysAreIgnoredAndListed() throws {
        let text =
            #"{"productionAppKey": "k", "enabledFeatures": ["push"], "site": "EU", "nested": {"a": [1, 2.5, null]}}"#
        let result = try ConfigReader().read(Data(text.utf8))
        #expect(result.configuration == PrivacyConfiguration(enabledFeatures: .push))
        #expect(result.ignoredKeys == ["productionAppKey", "site", "nested"])
        #expect(result.warnings.isEmpty)
    }

    @Test func theFormatIsDetectedFromTheContentNotTheName() {
        let jsonText = json(enabled: #"["push"]"#)
        #expect(outcome(jsonText, source: "Config.plist").format == .json)
        #expect(outcome("\u{FEFF} \n\t" + jsonText).format == .json)
        #expect(outcome(plist("<key>enabledFeatures</key><array/>"), source: "c.json").format == .xml)
        #expect(
            outcome("<plist><dict><key>enabledFeatures</key><string>push</string></dict></plist>").features == .push)
        #expect(outcome(binaryPlist(["enabledFeatures": ["push"]]), source: "c.json").format == .binary)
        #expect(ConfigFormat.detect(in: Array("  [1]".utf8)) == .json)
        #expect(ConfigFormat.detect(in: Array("hello".utf8)) == nil)
    }

    @Test(arguments: [
        ("<array><string>push</string><string> Analytics</string></array>", #"["push", " Analytics"]"#),
        ("<string>push,analytics</string>", #""push,analytics""#),
        ("<integer>20</integer>", "20"),
    ])
    func everyFormAlsoReadsFromXMLAndBinaryPlists(xmlValue: String, jsonValue: String) throws {
        let expected: Feature = [.push, .analytics]
        let fromXML = outcome(plist("<key>enabledFeatures</key>\(xmlValue)"))
        #expect(fromXML == Outcome(features: expected, reset: false, format: .xml, lines: []))
        let object = try JSONSerialization.jsonObject(with: Data(json(enabled: jsonValue).utf8))
        let fromBinary = outcome(binaryPlist(object))
        #expect(fromBinary == Outcome(features: expected, reset: false, format: .binary, lines: []))
        let fromFoundationXML = outcome(xmlPlist(object))
        #expect(fromFoundationXML == Outcome(features: expected, reset: false, format: .xml, lines: []))
    }

    @Test func aFileIsReadByURLAndNamedByItsPath() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.file("features.json", Data(json(enabled: #"["push", "chat"]"#).utf8))
        let result = try ConfigReader().read(contentsOf: url)
        #expect(result.configuration.enabledFeatures == .push)
        #expect(result.source == url.path(percentEncoded: false))
        #expect(result.warnings.map(\.source) == [url.path(percentEncoded: false)])
    }

    @Test func aBundleResourceIsFoundWithOrWithoutItsExtension() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("FeatureGate.plist", Data(plist("<key>enabledFeatures</key><string>contacts</string>").utf8))
        let bundle = try #require(Bundle(path: directory.path))
        let reader = ConfigReader()
        #expect(
            try reader.read(resource: "FeatureGate", withExtension: "plist", in: bundle).configuration.enabledFeatures
                == .contacts)
        #expect(try reader.read(resource: "FeatureGate.plist", in: bundle).format == .xml)
        #expect(throws: ConfigError.self) { try reader.read(resource: "Missing", withExtension: "plist", in: bundle) }
        do {
            _ = try reader.read(resource: "Missing", withExtension: "plist", in: bundle)
        } catch {
            #expect(error.kind == .resourceNotFound)
            #expect(
                error.description
                    == #"Missing.plist: error: (root): no resource named "Missing.plist" in the bundle at \#(bundle.bundlePath)"#
            )
        }
    }

    @Test func anAlreadyParsedDictionaryIsRead() throws {
        let reader = ConfigReader()
        let result = try reader.read(dictionary: [
            "enabledFeatures": ["push"], "resetEnabledFeatures": true, "other": 1,
        ])
        #expect(result.configuration == PrivacyConfiguration(enabledFeatures: .push, resetEnabledFeatures: true))
        #expect(result.format == nil)
        #expect(result.source == "<dictionary>")
        #expect(try reader.read(dictionary: ["enabledFeatures": 16]).configuration.enabledFeatures == .analytics)
        #expect(
            try reader.read(dictionary: ["enabledFeatures": NSNumber(value: 4)]).configuration.enabledFeatures == .push)
        #expect(try reader.read(dictionary: ["enabledFeatures": "all"]).configuration.enabledFeatures == .all)
        let nsArray = NSArray(array: [NSString(string: "analytics")])
        #expect(try reader.read(dictionary: ["enabledFeatures": nsArray]).configuration.enabledFeatures == .analytics)
    }

    @Test func aDictionaryTellsBooleansFromIntegersEvenAsNSNumber() throws {
        let reader = ConfigReader()
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(#"{"enabledFeatures": [], "resetEnabledFeatures": true}"#.utf8))
                as? [String: Any])
        #expect(try reader.read(dictionary: parsed).configuration.resetEnabledFeatures)
        #expect(
            try reader.read(dictionary: ["enabledFeatures": [], "resetEnabledFeatures": NSNumber(value: true)])
                .configuration.resetEnabledFeatures)
        #expect(throws: ConfigError.self) {
            try reader.read(dictionary: ["enabledFeatures": [], "resetEnabledFeatures": NSNumber(value: 1)])
        }
        do {
            _ = try reader.read(dictionary: ["enabledFeatures": true], sourceName: "Info.plist FeatureGate")
        } catch {
            #expect(
                error.description
                    == "Info.plist FeatureGate: error: enabledFeatures: expected an array of feature names, a comma-separated string of names, or an integer bitmask, found boolean true"
            )
        }
    }

    @Test func theResultFeedsAPrivacyManager() throws {
        let result = try ConfigReader(catalog: customCatalog).read(Data(json(enabled: #"["crash_reports"]"#).utf8))
        let manager = PrivacyManager(
            configuration: result.configuration, store: InMemoryFeatureStore(), catalog: customCatalog)
        #expect(manager.isEnabled(crashReports))
        #expect(!manager.isAnyEnabled(.all))
    }
}
