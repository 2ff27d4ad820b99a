#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import Testing

/// `featuregate check --format text|json|github|sarif` and `--same-features`, each against its contract.
@Suite struct CheckOutputFormatTests {
    private static let unknownName = "# Android\nenabledFeatures = push, in-app-automation\n"

    private func fixtures() -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        _ = directory.file("airshipconfig.properties", Data(Self.unknownName.utf8))
        _ = directory.file("ok.properties", Data("enabledFeatures = push analytics\n".utf8))
        _ = directory.file("warned.json", Data(#"{"enabledFeatures": ["push", "chat"]}"#.utf8))
        _ = directory.file(
            "AirshipConfig.plist",
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0">
                <dict>
                <key>enabledFeatures</key>
                <array><string>push</string><string>analytics</string></array>
                </dict>
                </plist>
                """.utf8))
        _ = directory.file("odd, name:%.properties", Data("enabledFeatures = pus\n".utf8))
        return directory
    }

    @Test func textPrintsOKForACleanFileAndProblemsOtherwise() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "ok.properties", "airshipconfig.properties"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                "ok.properties: OK",
                #"airshipconfig.properties: error: enabledFeatures[1]: line 2: unknown feature name "in-app-automation"; did you mean "in_app_automation"?"#,
            ])
    }

    @Test func jsonGivesLineColumnAndAirshipAndroidsReading() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "--format", "json", "airshipconfig.properties"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                #"{"file":"airshipconfig.properties","valid":false,"format":"properties","enabledFeatures":null,"resetEnabledFeatures":null,"diagnostics":[{"severity":"error","keyPath":"enabledFeatures[1]","message":"line 2: unknown feature name \"in-app-automation\"; did you mean \"in_app_automation\"?","line":2,"column":25}],"airshipAndroid":{"enabledFeatures":["analytics","contacts","feature_flags","in_app_automation","message_center","push","tags_and_attributes"],"resetEnabledFeatures":false}}"#
            ])
        // --json is --format json.
        let legacy = try featuregate(["check", "--json", "airshipconfig.properties"], in: directory)
        #expect(legacy.lines == run.lines)
    }

    @Test func githubPrintsOneWorkflowCommandPerDiagnosticThenASummary() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(
            ["check", "--format", "github", "./airshipconfig.properties", "warned.json", "ok.properties"],
            in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                #"::error file=./airshipconfig.properties,line=2,col=25,title=featuregate check::enabledFeatures[1]: unknown feature name "in-app-automation"; did you mean "in_app_automation"?"#,
                #"::warning file=warned.json,line=1,col=30,title=featuregate check::enabledFeatures[1]: "chat" is a feature Airship retired; ignored"#,
                "featuregate check: 3 file(s), 1 error(s), 1 warning(s)",
            ])
    }

    @Test func githubEscapesPropertiesAndMessages() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "--format", "github", "odd, name:%.properties"], in: directory)
        #expect(
            run.lines.first
                == #"::error file=odd%2C name%3A%25.properties,line=1,col=19,title=featuregate check::enabledFeatures[0]: unknown feature name "pus"; did you mean "push"?"#
        )
        // A file that does not exist: no line, no col.
        let missing = try featuregate(["check", "--format", "github", "missing.json"], in: directory)
        #expect(
            missing.lines.first
                == "::error file=missing.json,title=featuregate check::cannot open the file: No such file or directory")
    }

    @Test func sarifIsOneLogWithTheFieldsGitHubCodeScanningRequires() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(
            ["check", "--format", "sarif", "airshipconfig.properties", "warned.json", "missing.json", "ok.properties"],
            in: directory)
        #expect(run.status == 1)
        #expect(run.lines.count == 1)
        let log = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(log["version"] as? String == "2.1.0")
        #expect((log["$schema"] as? String)?.hasSuffix("sarif-2.1.0.json") == true)
        let runs = try #require(log["runs"] as? [[String: Any]])
        #expect(runs.count == 1)
        let driver = try #require((runs[0]["tool"] as? [String: Any])?["driver"] as? [String: Any])
        #expect(driver["name"] as? String == "featuregate")
        let rules = try #require(driver["rules"] as? [[String: Any]])
        let ruleIDs = rules.compactMap { $0["id"] as? String }
        #expect(Set(ruleIDs).count == rules.count)
        for rule in rules {
            for field in ["shortDescription", "fullDescription", "help"] {
                let text = (rule[field] as? [String: Any])?["text"] as? String
                #expect(text?.isEmpty == false, "\(rule["id"] ?? "?").\(field)")
            }
        }
        let results = try #require(runs[0]["results"] as? [[String: Any]])
        #expect(results.map { $0["ruleId"] as? String } == ["unknownName", "retiredName", "unreadableFile"])
        #expect(results.map { $0["level"] as? String } == ["error", "warning", "error"])
        for result in results {
            #expect(ruleIDs.contains(result["ruleId"] as? String ?? ""))
            #expect(((result["message"] as? [String: Any])?["text"] as? String)?.isEmpty == false)
            let hash = (result["partialFingerprints"] as? [String: Any])?["primaryLocationLineHash"] as? String
            #expect(hash?.isEmpty == false)
        }
        let locations = results.map { result -> (uri: String?, line: Int?, column: Int?) in
            let physical = ((result["locations"] as? [[String: Any]])?.first?["physicalLocation"]) as? [String: Any]
            let region = physical?["region"] as? [String: Any]
            return (
                (physical?["artifactLocation"] as? [String: Any])?["uri"] as? String, region?["startLine"] as? Int,
                region?["startColumn"] as? Int
            )
        }
        #expect(locations.map(\.uri) == ["airshipconfig.properties", "warned.json", "missing.json"])
        #expect(locations.map(\.line) == [2, 1, 1])  // 1 where the line is unknown
        #expect(locations.map(\.column) == [25, 30, nil])

        // The same problem keeps its fingerprint when a line is added above it.
        _ = directory.file("airshipconfig.properties", Data(("# moved\n" + Self.unknownName).utf8))
        let moved = try featuregate(["check", "--format", "sarif", "airshipconfig.properties"], in: directory)
        let movedResults = try #require(
            ((try JSONSerialization.jsonObject(with: Data(moved.output.utf8)) as? [String: Any])?["runs"]
                as? [[String: Any]])?.first?["results"] as? [[String: Any]])
        #expect(
            (movedResults.first?["partialFingerprints"] as? [String: String])
                == (results.first?["partialFingerprints"] as? [String: String]))
    }

    @Test func jsonGivesTheLineAndColumnOfATypoInJSONAndInAnXMLPlist() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        _ = directory.file("typo.json", Data("{\n  \"enabledFeatures\": [\"push\", \"anlytics\"]\n}\n".utf8))
        _ = directory.file(
            "typo.plist",
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <plist version="1.0">
                <dict>
                \t<key>enabledFeatures</key>
                \t<array>
                \t\t<string>push</string> <string>anlytics</string>
                \t</array>
                </dict>
                </plist>
                """.utf8))
        let run = try featuregate(["check", "--json", "typo.json", "typo.plist"], in: directory)
        #expect(run.status == 1)
        let places = try run.lines.map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let diagnostic = try #require((object["diagnostics"] as? [[String: Any]])?.first)
            return [diagnostic["line"] as? Int, diagnostic["column"] as? Int]
        }
        // The value "anlytics" starts at line 2, column 31 of the JSON, and its <string> at line 6, column 25.
        #expect(places == [[2, 31], [6, 25]])
        let github = try featuregate(["check", "--format", "github", "typo.plist"], in: directory)
        #expect(github.lines.first?.hasPrefix("::error file=typo.plist,line=6,col=25,") == true)
    }

    @Test func airshipAddsAndroidsReadingAndFailsWhereItEnablesMore() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "--airship", "airshipconfig.properties"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                #"airshipconfig.properties: error: enabledFeatures[1]: line 2: unknown feature name "in-app-automation"; did you mean "in_app_automation"?"#,
                #"airshipconfig.properties: error: enabledFeatures: line 2: Airship Android does not know the name "in-app-automation", ignores enabledFeatures and keeps its default: every feature"#,
            ])
        // --lenient with --airship: FeatureGate drops the name with a warning; Android still enables every feature.
        let lenient = try featuregate(["check", "--lenient", "--airship", "airshipconfig.properties"], in: directory)
        #expect(lenient.status == 1)
        #expect(lenient.lines.first?.contains(": warning: enabledFeatures[1]: line 2: unknown feature name") == true)
        #expect(lenient.lines.last?.contains(": error: enabledFeatures: line 2: Airship Android does not know") == true)

        // Android falls back to every feature without enabledFeatures, and reads -2 as a 32-bit mask.
        _ = directory.file("missing.properties", Data("# Android\nproductionAppKey = k\n".utf8))
        _ = directory.file("negative.properties", Data("enabledFeatures = -2\n".utf8))
        let missing = try featuregate(
            ["check", "--airship", "missing.properties", "negative.properties"], in: directory)
        #expect(missing.status == 1)
        #expect(
            missing.lines.contains(
                "missing.properties: error: enabledFeatures: missing: Airship Android then keeps its default: every feature"
            ))
        #expect(
            missing.lines.contains(
                "negative.properties: error: enabledFeatures: line 1: Airship Android (20.x) reads this file as enabling "
                    + "message_center, push, analytics, tags_and_attributes, contacts, feature_flags, which the file "
                    + "does not enable as written"))

        // dataCollectionOptInEnabled only takes away: a warning, next to the strict error on the missing key.
        _ = directory.file(
            "opt-in.properties", Data("# Android\nproductionAppKey = k\ndataCollectionOptInEnabled = true\n".utf8))
        let optIn = try featuregate(["check", "--airship", "opt-in.properties"], in: directory)
        #expect(optIn.status == 1)
        #expect(optIn.lines.filter { $0.contains(": warning: dataCollectionOptInEnabled: line 3:") }.count == 1)
        #expect(optIn.lines.filter { $0.contains(": error: ") }.count == 1)
        #expect(
            optIn.lines.contains { $0.contains(": error: enabledFeatures: missing. Airship enables every feature") })
    }

    @Test func sameFeaturesSaysWhatItComparedOrFailsOnEachFile() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let same = try featuregate(
            ["check", "--same-features", "AirshipConfig.plist", "ok.properties"], in: directory)
        #expect(same.status == 0)
        #expect(
            same.lines == [
                "AirshipConfig.plist: OK", "ok.properties: OK",
                "same features: push, analytics (AirshipConfig.plist, ok.properties)",
            ])

        _ = directory.file("ok.properties", Data("enabledFeatures = push\n".utf8))
        let differing = try featuregate(
            ["check", "--same-features", "AirshipConfig.plist", "ok.properties"], in: directory)
        #expect(differing.status == 1)
        #expect(
            differing.lines == [
                "AirshipConfig.plist: error: enabledFeatures: line 5: --same-features: analytics is enabled by AirshipConfig.plist; not by ok.properties",
                "ok.properties: error: enabledFeatures: line 1: --same-features: analytics is enabled by AirshipConfig.plist; not by ok.properties",
            ])

        // With --airship, each platform's own reading: Android keeps every feature on an unknown name.
        let platforms = try featuregate(
            ["check", "--airship", "--same-features", "AirshipConfig.plist", "airshipconfig.properties"],
            in: directory)
        #expect(platforms.status == 1)
        let differences = platforms.lines.filter { $0.contains(": --same-features: ") }
        #expect(differences.count == 10)  // five features, on each of the two files
        #expect(
            differences.first
                == "AirshipConfig.plist: error: enabledFeatures: line 5: --same-features: in_app_automation is enabled by airshipconfig.properties (Airship Android); not by AirshipConfig.plist (Airship iOS)"
        )
    }

    @Test func aSameFeaturesDifferenceIsALocatedResultInEveryMachineFormat() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        _ = directory.file("ok.properties", Data("enabledFeatures = push\n".utf8))
        let files = ["AirshipConfig.plist", "ok.properties"]

        let github = try featuregate(["check", "--format", "github", "--same-features"] + files, in: directory)
        #expect(github.status == 1)
        #expect(
            github.lines == [
                "::error file=AirshipConfig.plist,line=5,col=1,title=featuregate check::enabledFeatures: --same-features: analytics is enabled by AirshipConfig.plist; not by ok.properties",
                "::error file=ok.properties,line=1,col=19,title=featuregate check::enabledFeatures: --same-features: analytics is enabled by AirshipConfig.plist; not by ok.properties",
                "featuregate check: 2 file(s), 2 error(s), 0 warning(s)",
            ])
        #expect(github.errorOutput.isEmpty)

        let json = try featuregate(["check", "--format", "json", "--same-features"] + files, in: directory)
        #expect(json.status == 1)
        #expect(json.errorOutput.isEmpty)
        #expect(
            json.lines.last
                == #"{"file":"ok.properties","valid":true,"format":"properties","enabledFeatures":["push"],"resetEnabledFeatures":false,"diagnostics":[{"severity":"error","keyPath":"enabledFeatures","message":"line 1: --same-features: analytics is enabled by AirshipConfig.plist; not by ok.properties","line":1,"column":19}],"airshipAndroid":{"enabledFeatures":["push"],"resetEnabledFeatures":false}}"#
        )

        let sarif = try featuregate(["check", "--format", "sarif", "--same-features"] + files, in: directory)
        #expect(sarif.status == 1)
        #expect(sarif.errorOutput.isEmpty)
        let log = try #require(try JSONSerialization.jsonObject(with: Data(sarif.output.utf8)) as? [String: Any])
        let run = try #require((log["runs"] as? [[String: Any]])?.first)
        #expect(run["columnKind"] as? String == "unicodeCodePoints")
        let rules = try #require((run["tool"] as? [String: Any]).flatMap { $0["driver"] as? [String: Any] }?["rules"])
        let rule = try #require((rules as? [[String: Any]])?.first { $0["id"] as? String == "differentFeatures" })
        #expect((rule["shortDescription"] as? [String: Any])?["text"] as? String == "Different features")
        let results = try #require(run["results"] as? [[String: Any]])
        #expect(results.map { $0["ruleId"] as? String } == ["differentFeatures", "differentFeatures"])
        #expect(results.map { $0["level"] as? String } == ["error", "error"])
        let regions = results.map { result -> [String: Any]? in
            let physical = (result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any]
            var region = physical?["region"] as? [String: Any]
            region?["uri"] = (physical?["artifactLocation"] as? [String: Any])?["uri"]
            return region
        }
        #expect(regions.map { $0?["uri"] as? String } == files)
        #expect(regions.map { $0?["startLine"] as? Int } == [5, 1])
        #expect(regions.map { $0?["startColumn"] as? Int } == [1, 19])
        let fingerprints = results.compactMap {
            ($0["partialFingerprints"] as? [String: Any])?["primaryLocationLineHash"] as? String
        }
        #expect(Set(fingerprints).count == 2)

        // A comparison that passes says so on standard error, where it does not spoil the machine-readable output.
        _ = directory.file("ok.properties", Data("enabledFeatures = push, analytics\n".utf8))
        for format in ["json", "sarif"] {
            let passing = try featuregate(["check", "--format", format, "--same-features"] + files, in: directory)
            #expect(passing.status == 0)
            #expect(passing.errorLines == ["same features: push, analytics (AirshipConfig.plist, ok.properties)"])
        }
        let passing = try featuregate(["check", "--format", "github", "--same-features"] + files, in: directory)
        #expect(
            passing.lines == [
                "same features: push, analytics (AirshipConfig.plist, ok.properties)",
                "featuregate check: 2 file(s), 0 error(s), 0 warning(s)",
            ])
    }

    @Test func aPairComparesAFileGivenAloneWithTheOtherFileOfItsPair() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        _ = directory.file("ok.properties", Data("enabledFeatures = push\n".utf8))
        let pair = ["--pair", "./AirshipConfig.plist=ok.properties"]
        let run = try featuregate(["check", "--same-features", "ok.properties"] + pair, in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                "ok.properties: error: enabledFeatures: line 1: --same-features: analytics is enabled by ./AirshipConfig.plist; not by ok.properties",
                "./AirshipConfig.plist: error: enabledFeatures: line 5: --same-features: analytics is enabled by ./AirshipConfig.plist; not by ok.properties",
            ])
        // Both given: one comparison; a file in no pair is checked and not compared.
        _ = directory.file("ok.properties", Data("enabledFeatures = push, analytics\n".utf8))
        let both = try featuregate(
            [
                "check", "--same-features", "--pair=AirshipConfig.plist=ok.properties", "ok.properties",
                "AirshipConfig.plist", "warned.json",
            ],
            in: directory)
        #expect(both.status == 0)
        #expect(
            both.lines.suffix(2) == [
                "same features: push, analytics (AirshipConfig.plist, ok.properties)",
                "same features: warned.json is in no --pair; not compared",
            ])
        // The other file of the pair is missing: it is unreadable, and nothing is compared.
        let missing = try featuregate(
            ["check", "--same-features", "--pair", "AirshipConfig.plist=gone.properties", "AirshipConfig.plist"],
            in: directory)
        #expect(missing.status == 1)
        #expect(
            missing.lines.contains("gone.properties: error: (root): cannot open the file: No such file or directory"))
        #expect(
            missing.lines.last?.hasPrefix("same features: not compared (AirshipConfig.plist, gone.properties)") == true)
    }

    @Test func usageErrorsExitTwo() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        for arguments in [
            ["check", "--format", "xml", "ok.properties"], ["check", "--same-features", "ok.properties"],
            ["check", "--json", "--format", "sarif", "ok.properties"],
        ] {
            let run = try featuregate(arguments, in: directory)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.output.isEmpty)
        }
        for (arguments, message) in [
            (
                ["check", "--pair", "a=ok.properties", "ok.properties"],
                "--pair declares files to compare: give it with --same-features"
            ),
            (
                ["check", "--same-features", "--pair", "ok.properties=./ok.properties", "ok.properties"],
                "--pair ok.properties=./ok.properties: a file cannot be paired with itself"
            ),
            (
                ["check", "--same-features", "--pair", "ok.properties", "ok.properties"],
                "--pair ok.properties: expected A=B, two files to compare, e.g. "
                    + "--pair ios/App/AirshipConfig.plist=android/app/src/main/assets/airshipconfig.properties"
            ),
        ] {
            let run = try featuregate(arguments, in: directory)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.output.isEmpty)
            #expect(run.errorLines.first == "featuregate check: error: \(message)")
        }
    }
}
#endif
