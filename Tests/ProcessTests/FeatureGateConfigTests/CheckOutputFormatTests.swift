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
                #"::warning file=warned.json,line=1,title=featuregate check::enabledFeatures[1]: "chat" is a feature Airship retired; ignored"#,
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
        #expect(locations.map(\.column) == [25, nil, nil])

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

    @Test func airshipWarnsWhereAndroidReadsTheFileDifferently() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "--airship", "airshipconfig.properties"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines == [
                #"airshipconfig.properties: warning: enabledFeatures[1]: line 2: unknown feature name "in-app-automation" ignored; did you mean "in_app_automation"?"#,
                #"airshipconfig.properties: warning: enabledFeatures: line 2: Airship Android does not know the name "in-app-automation", ignores enabledFeatures and keeps its default: every feature"#,
            ])
    }

    @Test func sameFeaturesFailsWhenFilesEnableDifferentFeatures() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let same = try featuregate(
            ["check", "--same-features", "AirshipConfig.plist", "ok.properties"], in: directory)
        #expect(same.status == 0)
        #expect(same.lines == ["AirshipConfig.plist: OK", "ok.properties: OK"])

        _ = directory.file("ok.properties", Data("enabledFeatures = push\n".utf8))
        let differing = try featuregate(
            ["check", "--same-features", "AirshipConfig.plist", "ok.properties"], in: directory)
        #expect(differing.status == 1)
        #expect(
            differing.lines.last
                == "featuregate check: --same-features: analytics is enabled by AirshipConfig.plist; not by ok.properties"
        )

        // With --airship, each platform's own reading: Android keeps every feature on an unknown name.
        let platforms = try featuregate(
            ["check", "--airship", "--same-features", "AirshipConfig.plist", "airshipconfig.properties"],
            in: directory)
        #expect(platforms.status == 1)
        #expect(
            platforms.lines.filter { $0.hasPrefix("featuregate check: --same-features:") }.count == 5)
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
    }
}
#endif
