#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// `featuregate check` on every file of Examples/Configs behaves as Examples/Configs/README.md says.
@Suite struct ExampleConfigTests {
    private static let directory = packageRoot.appending(path: "Examples/Configs")

    /// Per file: the enabled features (`nil` for an invalid file) and the exact lines `check` prints.
    private static let expectations: [String: (features: [String]?, lines: [String])] = [
        "default-off.json": ([], []),
        "consent-policy.json": (["analytics", "push", "tags_and_attributes"], []),
        "all.json": (
            [
                "analytics", "contacts", "feature_flags", "in_app_automation", "message_center", "push",
                "tags_and_attributes",
            ], []
        ),
        "AirshipConfig.plist": (["in_app_automation", "message_center", "push"], []),
        "binary.plist": (
            ["analytics", "feature_flags", "push"],
            [
                "binary.plist: warning: resetEnabledFeatures: true: every launch discards the choices the app and the user made and applies enabledFeatures again, keeping only their refusals (consent refusals, and the flags revoke-all turned off)"
            ]
        ),
        "comma-separated.plist": (["analytics", "push", "tags_and_attributes"], []),
        "openstep.plist": (
            ["in_app_automation", "message_center", "push"],
            [
                "openstep.plist: warning: analyticsEnabled: line 9: false: Airship SDKs record and send no analytics events while it is false, whatever enabledFeatures says. FeatureGate does not read this key: analytics is off here too, because enabledFeatures does not enable it"
            ]
        ),
        "invalid-key-without-value.plist": (
            nil,
            [
                #"invalid-key-without-value.plist: error: developmentAppKey: line 5, column 2: the key "developmentAppKey" has no value (found <key> after it)"#
            ]
        ),
        "android-bitmask.json": (
            ["analytics", "contacts", "in_app_automation", "message_center", "push", "tags_and_attributes"],
            [
                "android-bitmask.json: warning: enabledFeatures: line 2: bits 3 (retired chat), 7 (retired location) are not known features and were dropped from 255"
            ]
        ),
        "retired-names.json": (
            ["contacts", "push"],
            [
                #"retired-names.json: warning: enabledFeatures[1]: line 2: "chat" is a feature Airship retired; ignored"#,
                #"retired-names.json: warning: enabledFeatures[2]: line 2: "location" is a feature Airship retired; ignored"#,
            ]
        ),
        "invalid-typo.json": (
            nil,
            [
                #"invalid-typo.json: error: enabledFeatures[1]: line 4: unknown feature name "anlytics"; did you mean "analytics"?"#,
                #"invalid-typo.json: error: enabledFeatures[2]: line 5: unknown feature name "inAppAutomation"; did you mean "in_app_automation"?"#,
            ]
        ),
        "invalid-missing-key.plist": (
            nil,
            [
                #"invalid-missing-key.plist: error: enabledFeatures: missing. Airship enables every feature when it is missing (--airship reads the file as Airship does); write ["all"] to keep that. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones: push, analytics and in-app messages stop for users who never changed a setting"#
            ]
        ),
        "invalid-misspelled-key.json": (
            nil,
            [
                #"invalid-misspelled-key.json: error: EnabledFeatures: line 2: unknown key "EnabledFeatures"; did you mean "enabledFeatures"? Keys are case-sensitive, and enabledFeatures is missing"#
            ]
        ),
        "invalid-wrong-type.json": (
            nil,
            [
                "invalid-wrong-type.json: error: enabledFeatures: line 2: expected an array of feature names, a comma-separated string of names, or an integer bitmask, found boolean true",
                #"invalid-wrong-type.json: error: resetEnabledFeatures: line 3: expected a boolean (<true/> or <false/> in a plist, true or false in JSON), found string "YES""#,
            ]
        ),
        "invalid-top-level-array.json": (
            nil,
            [
                "invalid-top-level-array.json: error: (root): line 1: expected a dictionary at the top level, found an array of 2 values"
            ]
        ),
        "invalid-negative-bitmask.json": (
            nil,
            [
                "invalid-negative-bitmask.json: error: enabledFeatures: line 2: expected a non-negative integer bitmask, found -1"
            ]
        ),
        "invalid-truncated.plist": (
            nil,
            [
                #"invalid-truncated.plist: error: developmentAppKey: line 5, column 2: the key "developmentAppKey" has no value (found the end of the file after it)"#
            ]
        ),
        "airshipconfig.properties": (["analytics", "in_app_automation", "message_center", "push"], []),
        "invalid-android-unknown-name.properties": (
            nil,
            [
                #"invalid-android-unknown-name.properties: error: enabledFeatures[1]: line 7: unknown feature name "in-app-automation"; did you mean "in_app_automation"?"#
            ]
        ),
        "invalid-android-data-collection-opt-in.properties": (
            nil,
            [
                #"invalid-android-data-collection-opt-in.properties: error: enabledFeatures: missing. Airship enables every feature when it is missing (--airship reads the file as Airship does); write ["all"] to keep that. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones: push, analytics and in-app messages stop for users who never changed a setting"#
            ]
        ),
        "invalid-empty.json": (
            nil,
            ["invalid-empty.json: error: (root): the file is empty: expected a dictionary with an enabledFeatures key"]
        ),
    ]

    @Test func everySampleHasAnExpectation() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path(percentEncoded: false))
        #expect(Set(files) == Set(Self.expectations.keys).union(["README.md"]))
    }

    @Test(arguments: expectations.keys.sorted())
    func checkBehavesAsDocumented(file: String) throws {
        let expected = try #require(Self.expectations[file])
        let run = try featuregate(["check", file], in: Self.directory)
        #expect(run.status == (file.hasPrefix("invalid-") ? 1 : 0))
        #expect((expected.features == nil) == file.hasPrefix("invalid-"))
        // A valid file with nothing to say prints `FILE: OK`.
        let isQuiet = expected.lines.isEmpty && !file.hasPrefix("invalid-")
        #expect(run.lines == (isQuiet ? ["\(file): OK"] : expected.lines))
        #expect(run.errorOutput.isEmpty)

        let json = try featuregate(["check", "--json", file], in: Self.directory)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["enabledFeatures"] as? [String] == expected.features)
    }

    @Test func theDefaultOffSampleEnablesNothing() throws {
        let result = try ConfigReader().read(contentsOf: Self.directory.appending(path: "default-off.json"))
        #expect(result.configuration == PrivacyConfiguration(enabledFeatures: [], resetEnabledFeatures: false))
        #expect(result.warnings.isEmpty)
    }

    @Test func theAirshipSampleReadsTheSameInEveryMode() throws {
        for mode in ConfigReadingMode.allCases {
            let result = try ConfigReader(mode: mode).read(
                contentsOf: Self.directory.appending(path: "AirshipConfig.plist"))
            #expect(result.configuration.enabledFeatures == [.push, .inAppAutomation, .messageCenter])
            #expect(result.ignoredKeys.contains("productionAppKey"))
        }
    }

    @Test func checkAirshipKeepsTheStrictErrorOnTheMissingKeySampleAndAddsAirshipsReading() throws {
        let run = try featuregate(["check", "--airship", "invalid-missing-key.plist"], in: Self.directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                #"invalid-missing-key.plist: error: enabledFeatures: missing. Airship enables every feature when it is missing (--airship reads the file as Airship does); write ["all"] to keep that. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones: push, analytics and in-app messages stop for users who never changed a setting"#,
                #"invalid-missing-key.plist: error: enabledFeatures: missing: Airship's iOS SDK (every version) then keeps its default and enables every feature; write the features to enable, ["all"] to keep that"#,
            ])
    }

    /// Every invalid sample fails `check --airship` too: the Airship readings add findings and never take one away.
    @Test(
        arguments: try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))
            .filter { $0.hasPrefix("invalid-") }.sorted())
    func everyInvalidSampleFailsUnderAirship(file: String) throws {
        let strict = try featuregate(["check", file], in: Self.directory)
        let airship = try featuregate(["check", "--airship", file], in: Self.directory)
        #expect(airship.status == 1)
        #expect(Set(strict.lines).isSubset(of: airship.lines), "--airship keeps every strict finding")
    }

    @Test func checkAirshipNamesEveryFeatureForTheAndroidUnknownNameSample() throws {
        let run = try featuregate(
            ["check", "--airship", "invalid-android-unknown-name.properties"], in: Self.directory)
        #expect(run.status == 1)
        #expect(
            run.lines.last
                == #"invalid-android-unknown-name.properties: error: enabledFeatures: line 7: Airship Android does not know the name "in-app-automation", ignores enabledFeatures and keeps its default: every feature"#
        )
    }

    /// `check --airship` on the valid samples: the files an Airship app accepts pass, the Airship forms that SDK 19
    /// and later fail takeOff on fail, as the README's table says.
    @Test func checkAirshipGivesTheDocumentedVerdicts() throws {
        let verdicts: [String: Int32] = [
            "default-off.json": 0, "all.json": 0, "AirshipConfig.plist": 0, "binary.plist": 0, "openstep.plist": 0,
            "invalid-missing-key.plist": 1, "comma-separated.plist": 1, "android-bitmask.json": 1,
            "retired-names.json": 1,
        ]
        for (file, status) in verdicts {
            let run = try featuregate(["check", "--airship", file], in: Self.directory)
            #expect(run.status == status, "\(file): \(run.lines)")
            #expect(run.lines.contains { $0.contains(": error: ") } == (status == 1), "\(file)")
        }
    }
}
#endif
