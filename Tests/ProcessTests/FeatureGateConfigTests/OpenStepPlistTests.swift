#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// Old-style (OpenStep) ASCII plists: what the reader accepts, how it tells them from JSON, and where it reports
/// their errors. The fixtures are written here for the purpose.
@Suite struct OpenStepPlistTests {
    /// An Airship-style config in the old format, with both kinds of comment and a trailing comma.
    static let airshipConfig = """
        // Written for these tests: the shape of an older app's AirshipConfig.plist.
        {
            /* Credentials */
            developmentAppKey = "dev-key";
            "productionAppKey" = 'prod-key';
            inProduction = NO;
            analyticsEnabled = YES;
            URLAllowListScopeOpenURL = ( "*", "https://example.com/*", );
            enabledFeatures = (push, "in_app_automation", Message_Center);
            resetEnabledFeatures = YES;
        }
        """

    @Test func anAirshipConfigInTheOldFormatReads() throws {
        let result = try ConfigReader().read(Data(Self.airshipConfig.utf8), sourceName: "c")
        #expect(result.format == .openStep)
        #expect(result.configuration.enabledFeatures == [.push, .inAppAutomation, .messageCenter])
        #expect(result.configuration.resetEnabledFeatures)
        #expect(result.warnings.map(\.kind) == [.resetDiscardsChoices])
        #expect(
            result.ignoredKeys == [
                "developmentAppKey", "productionAppKey", "inProduction", "analyticsEnabled", "URLAllowListScopeOpenURL",
            ])
    }

    @Test func everyValueFormReadsToTheExpectedTree() throws {
        let text = #"""
            {
                bare = abc_$+/:.-123;
                quoted = "a \"b\" \\ \t\n\U00e9\101";
                single = 'x"y';
                empty = "";
                yes = YES;
                number = 42;
                data = <0fBD 7778
                    00>;
                list = (a, (b, c), {k = v;}, <>,);
                emptyList = ();
                emptyDict = {};
                "spaced key" = "multi
            line";
                emoji = "\UD83D\UDE00";
            }
            """#
        let expected: GeneratedValue = .dictionary([
            ("bare", .string("abc_$+/:.-123")),
            ("quoted", .string("a \"b\" \\ \t\né\u{41}")),
            ("single", .string("x\"y")),
            ("empty", .string("")),
            ("yes", .string("YES")),
            ("number", .string("42")),
            ("data", .data([0x0F, 0xBD, 0x77, 0x78, 0x00])),
            (
                "list",
                .array([
                    .string("a"), .array([.string("b"), .string("c")]), .dictionary([("k", .string("v"))]), .data([]),
                ])
            ),
            ("emptyList", .array([])),
            ("emptyDict", .dictionary([])),
            ("spaced key", .string("multi\nline")),
            ("emoji", .string("😀")),
        ])
        let (format, root) = try ConfigReader().parse(bytes: Array(text.utf8), source: "c")
        #expect(format == .openStep)
        #expect(canonical(root) == canonical(try FoundationValueBridge.node(from: expected.object, limits: .default)))
    }

    @Test func aFileWithoutBracesIsReadAsTheContentsOfADictionary() throws {
        let result = try ConfigReader().read(Data("\"enabledFeatures\" = (analytics);\nsite = EU;\n".utf8))
        #expect(result.format == .openStep)
        #expect(result.configuration.enabledFeatures == .analytics)
        #expect(result.ignoredKeys == ["site"])
    }

    @Test(arguments: [
        ("{ a = b; }", ConfigFormat.openStep),
        ("{ \"a\" = b; }", .openStep),
        ("{ \"a\\\"=\" = b; }", .openStep),
        ("/* c */ { a = b; }", .openStep),
        ("// c\n{ a = b; }", .openStep),
        ("{ // c\n a = b; }", .openStep),
        ("(a, b)", .openStep),
        ("\"a\" = b;", .openStep),
        ("a = b;", .openStep),
        ("{ \"a\": 1 }", .json),
        ("{}", .json),
        ("{a: 1}", .json),
        ("[1]", .json),
        ("<plist/>", .xml),
    ])
    func theFormatIsJudgedFromTheContent(text: String, format: ConfigFormat) {
        #expect(ConfigFormat.detect(in: Array(text.utf8)) == format)
    }

    @Test func yesAndNoAreStringsButResetEnabledFeaturesTakesThemAsBooleans() {
        #expect(outcome("{ enabledFeatures = (); resetEnabledFeatures = NO; }").reset == false)
        #expect(outcome("{ enabledFeatures = (); resetEnabledFeatures = YES; }").reset == true)
        #expect(
            outcome("{ enabledFeatures = ();\nresetEnabledFeatures = yes; }").lines == [
                #"c: error: resetEnabledFeatures: line 2: expected YES or NO (an old-style plist has no booleans), found string "yes""#
            ])
        // In JSON, "YES" is a string and stays an error.
        #expect(outcome(#"{"enabledFeatures": [], "resetEnabledFeatures": "YES"}"#).features == nil)
    }

    @Test func namesFollowTheSameRulesAsInTheOtherFormats() {
        #expect(outcome("{ enabledFeatures = \"push, analytics\"; }").features == [.push, .analytics])
        #expect(
            outcome("{\n  enabledFeatures = (push,\n    pussh);\n}").lines == [
                #"c: error: enabledFeatures[1]: line 3: unknown feature name "pussh"; did you mean "push"?"#
            ])
        // A number is a string in this format, so 5 is a name, not a bitmask.
        #expect(outcome("{ enabledFeatures = 5; }").lines.first?.contains(#"unknown feature name "5""#) == true)
    }

    @Test(arguments: [
        (
            "{ enabledFeatures = (push) }",
            "line 1, column 28: expected ';' after the value of \"enabledFeatures\", found '}'"
        ),
        (
            "{ enabledFeatures = (push ",
            "line 1, column 27: expected ',' or ')' after an element of the array that starts on line 1, found the end of the file"
        ),
        (
            "{\n  a = b;\n  enabledFeatures = (push push);\n}",
            "line 3, column 27: expected ',' or ')' after an element of the array that starts on line 3, found 'p'"
        ),
        ("{ a = \"b; }", "line 1, column 12: the file ends inside the string that starts on line 1"),
        ("{ a = <0f1>; }", "line 1, column 11: the data holds an odd number of hex digits"),
        ("{ a = <0g>; }", "line 1, column 9: data holds 'g'"),
        ("{ a = b;\n/* open", "line 2, column 8: the file ends inside the comment that starts on line 2"),
        ("{ a = b;", "line 1, column 9: the file ends inside the dictionary that starts on line 1"),
        ("{ a = b; (c) = d; }", "line 1, column 10: expected a key (a string) or the end of the dictionary, found '('"),
        ("{ a = b; c d; }", "line 1, column 12: expected '=' after the key \"c\", found 'd'"),
        ("{ a = ; }", "line 1, column 3: the key \"a\" has no value (found ';' after it)"),
        ("{ a = b; } x", "line 1, column 12: found 'x' after the end of the top-level value"),
        ("{ a = \"\\UD800\"; }", "line 1, column 14: \\UD800 is half of a surrogate pair; the other half is missing"),
        ("{ a = \"\\351\"; }", "line 1, column 12: the octal escape \\351 is a NeXTSTEP character"),
        ("{ a = @; }", "line 1, column 7: expected a value, found '@'"),
    ])
    func malformedFilesAreErrorsWithLineAndColumn(text: String, message: String) throws {
        let error = try #require(readError(Data(text.utf8)))
        #expect(error.format == .openStep)
        #expect(error.firstError.message == message)
        #expect(error.line != nil)
    }

    @Test func nestingPastTheLimitIsAnError() {
        let deep = String(repeating: "(", count: 70) + String(repeating: ")", count: 70)
        let error = readError(Data("{ enabledFeatures = \(deep); }".utf8))
        #expect(error?.kind == .nestingTooDeep)
    }

    @Test func foundationReadsTheFixturesToTheSameTree() throws {
        for text in [Self.airshipConfig, "{ a = (b, <00ff>, {c = \"d e\";}); }"] {
            let data = Data(text.utf8)
            let (_, mine) = try ConfigReader().parse(bytes: [UInt8](data), source: "c")
            let theirs = try FoundationValueBridge.node(
                from: try PropertyListSerialization.propertyList(from: data, format: nil), limits: .default)
            #expect(canonical(mine) == canonical(theirs))
        }
    }

    @Test func everyConfigurationWrittenAsAnOldStylePlistReadsBack() throws {
        var generator = SeededGenerator(seed: 0x0_5E_0000)
        for _ in 0..<500 {
            let features = Feature(rawValue: UInt.random(in: 0...0x1FF, using: &generator)).intersection(.all)
            let configuration = PrivacyConfiguration(
                enabledFeatures: features, resetEnabledFeatures: generator.chance(50))
            let data = ConfigWriter.data(for: configuration, as: .openStep)
            let result = try ConfigReader().read(data)
            #expect(result.format == .openStep)
            #expect(result.configuration == configuration)
            #expect(result.warnings.map(\.kind) == (configuration.resetEnabledFeatures ? [.resetDiscardsChoices] : []))
        }
    }
}
#endif
