#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The `featuregate` executable, run as a subprocess: output lines, JSON, exit statuses and usage errors.
@Suite struct CommandLineToolTests {
    /// A fresh directory of sample files; the caller removes it.
    private func fixtures() -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        _ = directory.file("clean.json", Data(json(enabled: #"["push", "analytics"]"#).utf8))
        _ = directory.file("warned.json", Data(json(enabled: #"["push", "chat"]"#).utf8))
        _ = directory.file("typo.json", Data("{\n  \"enabledFeatures\": [\"pussh\"]\n}\n".utf8))
        _ = directory.file("airship.plist", Data(plist("<key>productionAppKey</key><string>k</string>").utf8))
        _ = directory.file("custom.json", Data(json(enabled: #"["crash_reports", "push"]"#).utf8))
        _ = directory.file(
            "reset.plist",
            Data(plist("<key>enabledFeatures</key><string>push</string>\n<key>resetEnabledFeatures</key><true/>").utf8))
        _ = directory.file("state.json", FeatureStateRecord(enabledFeatures: [.analytics, .contacts]).encoded())
        return directory
    }

    // MARK: - check

    @Test func checkPrintsOKForACleanFileAndExitsZero() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "clean.json"], in: directory)
        #expect(run.status == 0)
        #expect(run.lines == ["clean.json: OK"])
        #expect(run.errorOutput.isEmpty)
    }

    @Test func checkPrintsOneLinePerDiagnosticAndExitsOneWhenAnyFileIsInvalid() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "clean.json", "warned.json", "typo.json", "airship.plist"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                "clean.json: OK",
                #"warned.json: warning: enabledFeatures[1]: line 1: "chat" is a feature Airship retired; ignored"#,
                #"typo.json: error: enabledFeatures[0]: line 2: unknown feature name "pussh"; did you mean "push"?"#,
                #"airship.plist: error: enabledFeatures: missing. Airship enables every feature when it is missing (--airship reads the file as Airship does); write ["all"] to keep that. Writing [] instead turns off every feature the app or user has not set, on existing installs as well as new ones: push, analytics and in-app messages stop for users who never changed a setting"#,
            ])
    }

    @Test func warningsAloneLeaveTheExitStatusZero() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "warned.json"], in: directory)
        #expect(run.status == 0)
        #expect(run.lines.count == 1)
    }

    @Test func checkJSONPrintsOneObjectPerFileWithTheDocumentedKeys() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "--json", "warned.json", "typo.json", "missing.json"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.lines == [
                #"{"file":"warned.json","valid":true,"format":"json","enabledFeatures":["push"],"resetEnabledFeatures":false,"diagnostics":[{"severity":"warning","keyPath":"enabledFeatures[1]","message":"line 1: \"chat\" is a feature Airship retired; ignored","line":1,"column":30}]}"#,
                #"{"file":"typo.json","valid":false,"format":"json","enabledFeatures":null,"resetEnabledFeatures":null,"diagnostics":[{"severity":"error","keyPath":"enabledFeatures[0]","message":"line 2: unknown feature name \"pussh\"; did you mean \"push\"?","line":2,"column":23}]}"#,
                #"{"file":"missing.json","valid":false,"format":null,"enabledFeatures":null,"resetEnabledFeatures":null,"diagnostics":[{"severity":"error","keyPath":"(root)","message":"cannot open the file: No such file or directory","line":null,"column":null}]}"#,
            ])
        for line in run.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(
                Set(object.keys) == [
                    "file", "valid", "format", "enabledFeatures", "resetEnabledFeatures", "diagnostics",
                ])
        }
        let clean = try featuregate(["check", "--json", "clean.json"], in: directory)
        #expect(clean.status == 0)
        #expect(
            clean.lines == [
                #"{"file":"clean.json","valid":true,"format":"json","enabledFeatures":["analytics","push"],"resetEnabledFeatures":false,"diagnostics":[]}"#
            ])
    }

    @Test func lenientDropsUnknownNamesAndAirshipAddsAirshipsReading() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let lenient = try featuregate(["check", "--lenient", "typo.json"], in: directory)
        #expect(lenient.status == 0)
        #expect(
            lenient.lines == [
                #"typo.json: warning: enabledFeatures[0]: line 2: unknown feature name "pussh" ignored; did you mean "push"?"#
            ])
        // --airship keeps the strict error on a missing enabledFeatures and adds Airship iOS's reading of it.
        let airship = try featuregate(["check", "--airship", "--json", "airship.plist"], in: directory)
        #expect(airship.status == 1)
        #expect(airship.output.contains(#""valid":false,"format":"xml","enabledFeatures":null"#))
        #expect(airship.output.contains(#""message":"missing. Airship enables every feature"#))
        #expect(
            airship.output.contains(
                "Airship's iOS SDK (every version) then keeps its default and enables every feature"))
        #expect(try featuregate(["check", "--lenient", "airship.plist"], in: directory).status == 1)
        // check takes both: the lenient reading, and Airship's.
        let both = try featuregate(["check", "--lenient", "--airship", "typo.json"], in: directory)
        #expect(both.status == 1)
        #expect(
            both.lines == [
                #"typo.json: warning: enabledFeatures[0]: line 2: unknown feature name "pussh" ignored; did you mean "push"?"#,
                #"typo.json: error: enabledFeatures[0]: line 2: Airship iOS SDK 19 and later fail takeOff on "pussh" (not one of Airship's names, did you mean "push"?); SDK 16 to 18 ignore the value and enable every feature"#,
            ])
    }

    @Test func flagAcceptsAnSDKsOwnFlags() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        #expect(try featuregate(["check", "custom.json"], in: directory).status == 1)
        let run = try featuregate(["check", "--json", "--flag", "crash_reports=16", "custom.json"], in: directory)
        #expect(run.status == 0)
        #expect(run.output.contains(#""enabledFeatures":["crash_reports","push"]"#))
        let inline = try featuregate(["check", "--flag=crash_reports=16", "custom.json"], in: directory)
        #expect(inline.status == 0)
    }

    @Test func aDashReadsStandardInput() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "-"], in: directory, input: Data(json(enabled: #"["pish"]"#).utf8))
        #expect(run.status == 1)
        #expect(
            run.lines == [
                #"<stdin>: error: enabledFeatures[0]: line 1: unknown feature name "pish"; did you mean "push"?"#
            ])
    }

    // MARK: - Usage

    @Test(arguments: [
        ([], "OVERVIEW: Check, explain and convert FeatureGate config files: XML, binary and old-style plists, JSON,"),
        (["chek", "x"], "featuregate: error: unknown command 'chek'; did you mean 'check'?"),
        (["check"], "featuregate check: error: no FILE given"),
        (["check", "--jsn", "x"], "featuregate check: error: unknown option '--jsn'; did you mean '--json'?"),
        (["check", "--state", "s", "x"], "featuregate check: error: unknown option '--state'"),
        (["check", "--json=yes", "x"], "featuregate check: error: option '--json' takes no value"),
        (
            ["check", "--flag", "crash=3", "x"],
            "featuregate check: error: --flag crash=3: expected NAME=BIT with BIT in 16...31, e.g. --flag crash_reports=16"
        ),
        (
            ["check", "--flag", "push=16", "x"],
            #"featuregate check: error: --flag push=16: feature name "push" is already registered"#
        ),
        (["check", "--flag"], "featuregate check: error: option '--flag' needs a value"),
        (["explain"], "featuregate explain: error: no FILE given"),
        (["explain", "a", "b"], "featuregate explain: error: explain takes one FILE"),
        (
            ["explain", "--state", "a", "--state", "b", "c"],
            "featuregate explain: error: option '--state' is given more than once"
        ),
        (["convert", "x"], "featuregate convert: error: --to json|xml|binary|openstep|properties is required"),
        (
            ["convert", "x", "--to", "yaml"],
            "featuregate convert: error: --to yaml: expected json, xml, binary, openstep or properties"
        ),
        (
            ["convert", "x", "--to", "json", "-o", "a", "--output", "b"],
            "featuregate convert: error: give -o or --output, not both"
        ),
        (["help", "nothing"], "featuregate: error: unknown command 'nothing'"),
        (
            ["convert", "x", "--to", "json", "--airship", "--lenient"],
            "featuregate convert: error: --lenient and --airship conflict: give one (--airship already drops unknown names)"
        ),
        (
            ["explain", "--airship", "x", "--lenient"],
            "featuregate explain: error: --lenient and --airship conflict: give one (--airship already drops unknown names)"
        ),
    ])
    func usageErrorsExitTwoWithAClearMessage(arguments: [String], message: String) throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(arguments, in: directory)
        #expect(run.status == 2)
        #expect(run.errorLines.first == message)
        #expect(run.output.isEmpty)
    }

    @Test func usageErrorsOfACommandShowItsUsage() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["check", "--bogus", "x"], in: directory)
        #expect(
            run.errorLines == [
                "featuregate check: error: unknown option '--bogus'",
                "Usage: featuregate check [--format text|json|github|sarif] [--json] [--lenient] [--airship] [--same-features [--pair A=B]...] [--flag NAME=BIT]... FILE...",
                "Run 'featuregate check --help' for more.",
            ])
    }

    @Test(arguments: [
        (["--help"], "USAGE: featuregate <command> [options] FILE..."),
        (["help"], "USAGE: featuregate <command> [options] FILE..."),
        (
            ["check", "--help"],
            "USAGE: featuregate check [--format text|json|github|sarif] [--json] [--lenient] [--airship] [--same-features [--pair A=B]...] [--flag NAME=BIT]... FILE..."
        ),
        (
            ["help", "check"],
            "USAGE: featuregate check [--format text|json|github|sarif] [--json] [--lenient] [--airship] [--same-features [--pair A=B]...] [--flag NAME=BIT]... FILE..."
        ),
        (
            ["explain", "-h"],
            "USAGE: featuregate explain [--state STATE_FILE] [--lenient | --airship] [--flag NAME=BIT]... FILE"
        ),
        (
            ["convert", "--help", "--to", "yaml"],
            "USAGE: featuregate convert FILE --to json|xml|binary|openstep|properties [-o OUT] [--lenient | --airship]"
                + " [--flag NAME=BIT]..."
        ),
    ])
    func helpWorksOnEveryCommand(arguments: [String], usage: String) throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(arguments, in: directory)
        #expect(run.status == 0)
        #expect(run.lines.contains(usage))
        #expect(run.errorOutput.isEmpty)
    }

    @Test func overviewListsEveryFormatRead() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["--help"], in: directory)
        #expect(
            run.lines.prefix(2) == [
                "OVERVIEW: Check, explain and convert FeatureGate config files: XML, binary and old-style plists, JSON,",
                "and .properties files (Airship Android's airshipconfig.properties).",
            ])
        #expect(run.lines.contains("       featuregate --version"))
        let check = try featuregate(["check", "--help"], in: directory)
        #expect(check.output.contains("Reads XML, binary and old-style plists, JSON, and .properties files"))
    }

    @Test func convertHelpSaysEveryKeyIsKeptAndListsEveryFormat() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["convert", "--help"], in: directory)
        #expect(run.status == 0)
        #expect(!run.output.contains("not converted"))
        #expect(run.output.contains("Every key is kept"))
        #expect(run.output.contains("--to FORMAT         json, xml, binary, openstep or properties"))
    }

    // MARK: - explain

    @Test func explainShowsEveryFlagAndWhyOnAFirstLaunch() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["explain", "clean.json"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines == [
                "config: clean.json (json)",
                "  enabledFeatures: [push, analytics]",
                "  resetEnabledFeatures: false",
                "state: none (a first launch: nothing stored)",
                "",
                "FLAG                 STATE  WHY",
                "in_app_automation    off    configuration: not in enabledFeatures",
                "message_center       off    configuration: not in enabledFeatures",
                "push                 on     configuration: in enabledFeatures",
                "analytics            on     configuration: in enabledFeatures",
                "tags_and_attributes  off    configuration: not in enabledFeatures",
                "contacts             off    configuration: not in enabledFeatures",
                "feature_flags        off    configuration: not in enabledFeatures",
            ])
    }

    /// The built-in flags other than analytics and contacts: decided off by a version 1 record of those two.
    static let otherBuiltInFlags = "[in_app_automation, message_center, push, tags_and_attributes, feature_flags]"

    @Test func explainWithAStateFileShowsTheStoredStateWinning() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["explain", "clean.json", "--state", "state.json"], in: directory)
        #expect(run.status == 0)
        #expect(run.lines[3] == "state: state.json: on [analytics, contacts], off \(Self.otherBuiltInFlags)")
        #expect(run.lines[8] == "push                 off    stored state: disabled by the app or user earlier")
        #expect(run.lines[11] == "contacts             on     stored state: enabled by the app or user earlier")
    }

    @Test func explainShowsWhatAVersionTwoRecordDecidedAndTheRefusalsItKeeps() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let record = FeatureStateRecord(
            enabledFeatures: .push, decidedFeatures: [.push, .analytics], deniedConsentCategories: [.analytics])
        _ = directory.file("v2.json", record.encoded())
        let run = try featuregate(["explain", "clean.json", "--state", "v2.json"], in: directory)
        #expect(run.status == 0)
        #expect(run.lines[3] == "state: v2.json: on [push], off [analytics], consent refused [analytics]")
    }

    @Test func explainWithResetShowsTheStoredStateDiscarded() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["explain", "--state=state.json", "reset.plist"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines[3]
                == "state: state.json: on [analytics, contacts], off \(Self.otherBuiltInFlags)"
                + " (discarded: resetEnabledFeatures is true)")
        #expect(
            run.lines[8]
                == "push                 on     configuration: in enabledFeatures (resetEnabledFeatures discarded the stored state)"
        )
        #expect(
            run.lines[11]
                == "contacts             off    configuration: not in enabledFeatures (resetEnabledFeatures discarded the stored state)"
        )
        // The state file is only read.
        #expect(
            try Data(contentsOf: directory.url.appending(path: "state.json"))
                == FeatureStateRecord(enabledFeatures: [.analytics, .contacts]).encoded())
    }

    @Test func explainWithResetShowsRevokeAllKeepingEveryFlagOff() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        // What revoke-all leaves, and then the app turned push back on.
        var record = FeatureStateRecord(enabledFeatures: .push, decidedFeatures: .all)
        record.revokedFeatures = Feature.all.subtracting(.push)
        _ = directory.file("revoked.json", record.encoded())
        let run = try featuregate(["explain", "--state=revoked.json", "reset.plist"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines[3]
                == "state: revoked.json: on [push], off [] (discarded: resetEnabledFeatures is true), revoked "
                + "[in_app_automation, message_center, analytics, tags_and_attributes, contacts, feature_flags] "
                + "(kept: revoke-all is the user's refusal)")
        #expect(
            run.lines[8]
                == "push                 on     configuration: in enabledFeatures (resetEnabledFeatures discarded the stored state)"
        )
        #expect(
            run.lines[9]
                == "analytics            off    revoke-all: the user's refusal, kept until the app or user turns it on")
    }

    @Test func explainWithResetKeepsTheStoredConsentRefusalsAsTheLibraryDoes() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let record = FeatureStateRecord(
            enabledFeatures: .analytics, decidedFeatures: [.analytics, .contacts],
            deniedConsentCategories: [.analytics, .advertising])
        _ = directory.file("refused.json", record.encoded())
        let run = try featuregate(["explain", "--state", "refused.json", "reset.plist"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.lines[3]
                == "state: refused.json: on [analytics], off [contacts] (discarded: resetEnabledFeatures is true)"
                + ", consent refused [advertising, analytics] (kept: a reset never undoes a consent refusal)")
        // What the library does with the same record: the reset keeps the refusals.
        let store = InMemoryFeatureStore(record: record.encoded())
        _ = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .push, resetEnabledFeatures: true), store: store)
        let kept = try FeatureStateRecord(decoding: try #require(try store.load()))
        #expect(kept.deniedConsentCategories == [.analytics, .advertising])
        #expect(kept.decidedFeatures.isEmpty)
    }

    @Test func explainWithAnUnreadableStateFallsBackToTheConfigurationAndSaysSo() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        _ = directory.file("corrupt.json", Data("{\"version\":".utf8))
        let run = try featuregate(["explain", "clean.json", "--state", "corrupt.json"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.errorLines == [
                #"corrupt.json: warning: (root): stored features are malformed: expected {"version": 2, "enabledFeatures": <bitmask>, "decidedFeatures": <bitmask>, "deniedConsentCategories": [<name>]}, found "{"version":" (11 bytes); the app would use the configuration"#
            ])
        #expect(run.lines[3] == "state: corrupt.json: unreadable")
        #expect(
            run.lines[8]
                == "push                 on     configuration: in enabledFeatures (the stored state is unreadable)")
    }

    @Test func explainFailsOnAMissingStateFileOrAnInvalidConfig() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let missing = try featuregate(["explain", "clean.json", "--state", "nope.json"], in: directory)
        #expect(missing.status == 1)
        #expect(missing.errorLines == ["nope.json: error: (root): cannot read the state file: no such file"])
        let invalid = try featuregate(["explain", "typo.json"], in: directory)
        #expect(invalid.status == 1)
        #expect(invalid.output.isEmpty)
        #expect(
            invalid.errorLines == [
                #"typo.json: error: enabledFeatures[0]: line 2: unknown feature name "pussh"; did you mean "push"?"#
            ])
    }

    // MARK: - convert

    @Test func convertWritesTheConfigInAnotherFormat() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["convert", "clean.json", "--to", "json"], in: directory)
        #expect(run.status == 0)
        #expect(
            run.output
                == "{\n  \"enabledFeatures\": [\n    \"analytics\",\n    \"push\"\n  ],\n  \"resetEnabledFeatures\": false\n}\n"
        )
        for format in ["xml", "binary"] {
            let out = "out.\(format)"
            let converted = try featuregate(["convert", "reset.plist", "--to", format, "-o", out], in: directory)
            #expect(converted.status == 0)
            #expect(converted.output.isEmpty)
            let result = try ConfigReader().read(contentsOf: directory.url.appending(path: out))
            #expect(result.format == ConfigFormat(rawValue: format))
            #expect(result.configuration == PrivacyConfiguration(enabledFeatures: .push, resetEnabledFeatures: true))
        }
    }

    @Test func convertToADashWritesToStandardOutputAndCreatesNoFile() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let expected = try featuregate(["convert", "clean.json", "--to", "json"], in: directory).output
        #expect(!expected.isEmpty)
        for arguments in [["-o", "-"], ["--output", "-"], ["--output=-"]] {
            let run = try featuregate(["convert", "clean.json", "--to", "json"] + arguments, in: directory)
            #expect(run.status == 0, "\(arguments)")
            #expect(run.output == expected, "\(arguments)")
            #expect(
                !FileManager.default.fileExists(atPath: directory.url.appending(path: "-").path(percentEncoded: false)))
        }
        // Standard output is a file here, not a terminal, so a binary plist may go there too: the same bytes as -o FILE.
        let binary = try featuregate(["convert", "clean.json", "--to", "binary", "-o", "-"], in: directory)
        #expect(binary.status == 0)
        _ = try featuregate(["convert", "clean.json", "--to", "binary", "-o", "out.bplist"], in: directory)
        let file = try Data(contentsOf: directory.url.appending(path: "out.bplist"))
        #expect(file.starts(with: Array("bplist00".utf8)))
        #expect(binary.output == String(decoding: file, as: UTF8.self))
    }

    @Test func aMissingExecutableFailsWithAMessageInsteadOfBeingSkipped() {
        do {
            _ = try runBuiltExecutable("featuregate-no-such-tool", [], in: packageRoot)
            Issue.record("ran an executable that is not built")
        } catch {
            #expect("\(error)".hasPrefix("featuregate-no-such-tool is not built: looked in "))
            #expect("\(error)".contains("swift build --build-tests"))
        }
    }

    @Test func convertOfAnInvalidFileWritesNothingAndExitsOne() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(["convert", "typo.json", "--to", "xml", "-o", "never.plist"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.errorLines == [
                #"typo.json: error: enabledFeatures[0]: line 2: unknown feature name "pussh"; did you mean "push"?"#
            ])
        #expect(
            !FileManager.default.fileExists(
                atPath: directory.url.appending(path: "never.plist").path(percentEncoded: false)))
    }

    @Test func convertReportsAnOutputItCannotWrite() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(
            ["convert", "clean.json", "--to", "json", "-o", "no/such/dir/out.json"], in: directory)
        #expect(run.status == 1)
        #expect(
            run.errorLines.first?.hasPrefix("featuregate convert: error: cannot write no/such/dir/out.json: ") == true)
    }
}
#endif
