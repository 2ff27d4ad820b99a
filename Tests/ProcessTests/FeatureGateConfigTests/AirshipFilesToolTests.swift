#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// `featuregate` on the AirshipConfig.plist files apps ship: `check --airship` answers whether Airship would
/// accept the file, `explain --airship` says where each value comes from, and `convert` keeps every key.
@Suite struct AirshipFilesToolTests {
    /// A template app's config as an XML plist, without enabledFeatures, with Airship's analytics switch off.
    static let template = plist(
        """
        <key>developmentAppKey</key>
        <string>dev</string>
        <key>inProduction</key>
        <false/>
        <key>analyticsEnabled</key>
        <false/>
        <key>URLAllowListScopeOpenURL</key>
        <array><string>*</string></array>
        <key>site</key>
        <dict><key>name</key><string>EU</string><key>since</key><date>2024-05-01T12:00:00Z</date></dict>
        """)

    // MARK: - check --airship

    @Test(arguments: [
        (
            json(enabled: #"["push", "anlytics"]"#),
            #"c.json: error: enabledFeatures[1]: line 1: Airship iOS SDK 19 and later fail takeOff on "anlytics" (not one of Airship's names, did you mean "analytics"?); SDK 16 to 18 ignore the value and enable every feature"#
        ),
        (
            json(enabled: #"["push", "chat"]"#),
            #"c.json: error: enabledFeatures[1]: line 1: Airship iOS SDK 19 and later fail takeOff on "chat" (Airship retired "chat"); SDK 16 to 18 ignore the value and enable every feature"#
        ),
        (
            json(enabled: #"[" push"]"#),
            #"c.json: error: enabledFeatures[0]: line 1: Airship iOS SDK 19 and later fail takeOff on " push" (Airship does not trim the spaces around a name); SDK 16 to 18 ignore the value and enable every feature"#
        ),
        (
            json(enabled: #""push,analytics""#),
            "c.json: error: enabledFeatures: line 1: Airship iOS SDK 19 and later fail takeOff on a string here: they read enabledFeatures as an array of names only; SDK 16 to 18 read it as comma-separated names. Write an array of names"
        ),
        (
            json(enabled: #""push, analytics""#),
            #"c.json: error: enabledFeatures: line 1: Airship iOS SDK 19 and later fail takeOff on a string here: they read enabledFeatures as an array of names only; SDK 16 to 18 split it at commas without trimming spaces, cannot read " analytics", and enable every feature. Write an array of names"#
        ),
        (
            json(enabled: "5"),
            "c.json: error: enabledFeatures: line 1: Airship iOS SDK 19 and later fail takeOff on integer 5 here: they read enabledFeatures as an array of names only (the integer bitmask is Airship Android's form); SDK 16 to 18 ignore the value and enable every feature"
        ),
        (
            #"{"enabledFeatures": [], "isAnalyticsEnabled": "no"}"#,
            #"c.json: error: isAnalyticsEnabled: line 1: Airship iOS SDK 19 and later fail takeOff on string "no" here: they read isAnalyticsEnabled as a boolean"#
        ),
    ])
    func checkAirshipFailsAFileAirshipRejects(text: String, line: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("c.json", Data(text.utf8))
        let run = try featuregate(["check", "--airship", "c.json"], in: directory)
        #expect(run.status == 1)
        // Airship's reading adds its error to FeatureGate's strict findings, which stay.
        let strict = try featuregate(["check", "c.json"], in: directory)
        let strictFindings = strict.lines.filter { $0 != "c.json: OK" }
        #expect(run.lines == strictFindings + [line])
        let lenient = try featuregate(["check", "--lenient", "c.json"], in: directory)
        #expect(lenient.status == 0, "only --airship asks whether Airship accepts the file")

        let json = try featuregate(["check", "--airship", "--json", "c.json"], in: directory)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["valid"] as? Bool == false)
        #expect(object["enabledFeatures"] is NSNull)
    }

    @Test func checkAirshipPassesWhatAirshipReadsAsWritten() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("a.json", Data(json(enabled: #"["PUSH", "all", "none"]"#).utf8))
        _ = directory.file("b.plist", Data(OpenStepPlistTests.airshipConfig.utf8))
        let run = try featuregate(["check", "--airship", "a.json", "b.plist"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines == [
                #"a.json: warning: enabledFeatures[2]: line 1: "none" next to other names turns nothing off; the other names still count"#,
                "b.plist: warning: resetEnabledFeatures: line 10: true: every launch discards the choices the app and the user made and applies enabledFeatures again, keeping only their refusals (consent refusals, and the flags revoke-all turned off)",
            ])
    }

    @Test func checkAirshipFailsAFileWithoutEnabledFeaturesWhichEverySDKReadsAsEverything() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("c.plist", Data(Self.template.utf8))
        let run = try featuregate(["check", "--airship", "c.plist"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                "c.plist: error: enabledFeatures: missing. Airship enables every feature when it is missing (--airship reads the file as Airship does); write [\"all\"] to keep that. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones: push, analytics and in-app messages stop for users who never changed a setting",
                #"c.plist: error: enabledFeatures: missing: Airship's iOS SDK (every version) then keeps its default and enables every feature; write the features to enable, ["all"] to keep that"#,
            ])
    }

    // MARK: - explain --airship

    @Test func explainAirshipSaysAMissingKeyIsAirshipsDefaultAndShowsTheAnalyticsSwitch() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("c.plist", Data(Self.template.utf8))
        let run = try featuregate(["explain", "--airship", "c.plist"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines.contains(
                "  enabledFeatures: [in_app_automation, message_center, push, analytics, tags_and_attributes, "
                    + "contacts, feature_flags] (missing: Airship's default, every feature)"))
        #expect(run.lines.contains(row("push", "on     configuration: Airship's default (enabledFeatures is missing)")))
        #expect(
            run.lines.contains(
                row(
                    "analytics",
                    "on     configuration: Airship's default (enabledFeatures is missing); Airship itself would "
                        + "record no analytics events: analyticsEnabled is false")))
        #expect(!run.output.contains("in enabledFeatures"))
    }

    @Test func explainOfAFileThatNamesItsFeaturesSaysSo() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("c.plist", Data(OpenStepPlistTests.airshipConfig.utf8))
        let run = try featuregate(["explain", "--airship", "c.plist"], in: directory)
        #expect(run.lines.first == "config: c.plist (openstep)")
        #expect(run.lines.contains(row("push", "on     configuration: in enabledFeatures")))
        #expect(run.lines.contains(row("analytics", "off    configuration: not in enabledFeatures")))
    }

    /// A row of explain's table: the flag padded to the width of the longest built-in name.
    private func row(_ flag: String, _ rest: String) -> String {
        flag.padding(toLength: "tags_and_attributes".count + 2, withPad: " ", startingAt: 0) + rest
    }

    // MARK: - convert

    @Test func convertKeepsEveryKeyWithItsTypeAndWritesFeatureGateKeysCanonically() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("AirshipConfig.plist", Data(Self.template.utf8))
        let run = try featuregate(
            ["convert", "AirshipConfig.plist", "--to", "binary", "-o", "AirshipConfig.plist", "--airship"],
            in: directory)
        #expect(run.status == 0)
        let data = try Data(contentsOf: directory.url.appending(path: "AirshipConfig.plist"))
        let object = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(object["developmentAppKey"] as? String == "dev")
        #expect(object["inProduction"] as? Bool == false)
        #expect(object["analyticsEnabled"] as? Bool == false)
        #expect(object["URLAllowListScopeOpenURL"] as? [String] == ["*"])
        let site = try #require(object["site"] as? [String: Any])
        #expect(site["name"] as? String == "EU")
        #expect(
            (site["since"] as? Date)?.timeIntervalSinceReferenceDate
                == PlistDateText.seconds(fromISO: "2024-05-01T12:00:00Z"))
        #expect(object["enabledFeatures"] as? [String] == FeatureCatalog.builtIn.names(of: .all).sorted())
        #expect(object["resetEnabledFeatures"] as? Bool == false)
        #expect(object.count == 7)
    }

    @Test func convertOfAnOldStylePlistKeepsItsStringsAsStrings() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("c.plist", Data(OpenStepPlistTests.airshipConfig.utf8))
        let run = try featuregate(["convert", "c.plist", "--to", "json"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.output == """
                {
                  "developmentAppKey": "dev-key",
                  "productionAppKey": "prod-key",
                  "inProduction": "NO",
                  "analyticsEnabled": "YES",
                  "URLAllowListScopeOpenURL": [
                    "*",
                    "https://example.com/*"
                  ],
                  "enabledFeatures": [
                    "in_app_automation",
                    "message_center",
                    "push"
                  ],
                  "resetEnabledFeatures": true
                }

                """)
    }

    @Test func aValueTheOutputCannotHoldIsAnErrorAndTheInputStaysAsItWas() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let original = Data(Self.template.utf8)
        _ = directory.file("c.plist", original)
        let run = try featuregate(["convert", "c.plist", "--to", "json", "-o", "c.plist", "--airship"], in: directory)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(
            run.errorLines.last
                == "c.plist: error: site.since: line 13: cannot write date 2024-05-01T12:00:00Z as JSON: JSON has no dates; nothing was written"
        )
        #expect(try Data(contentsOf: directory.url.appending(path: "c.plist")) == original)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["c.plist"], "no temporary file is left behind")
    }
}
#endif
