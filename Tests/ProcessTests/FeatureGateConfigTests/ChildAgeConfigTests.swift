#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// `consentPolicy.childUnderAge`, `consentPolicy.declinedAgeRange` and `consentPolicy.adultRangeDeclaration`: how a
/// declared age range sets the child mark.
@Suite struct ChildAgeConfigTests {
    static func policy(_ body: String) -> Data {
        Data((#"{"enabledFeatures": [], "consentPolicy": {"categories": {}"# + body + "}}").utf8)
    }

    @Test func theDefaultsAreThirteenAndDeclinedIsAChild() throws {
        let policy = try #require(try ConfigReader().read(Self.policy("")).consentPolicy)
        #expect(policy.childAge == ChildAgeRule(childUnderAge: 13, declinedIsChild: true, adultRangeDeclaration: .any))
    }

    @Test(arguments: AdultRangeDeclaration.allCases)
    func adultRangeDeclarationReadsEachValue(value: AdultRangeDeclaration) throws {
        let result = try ConfigReader().read(Self.policy(#", "adultRangeDeclaration": "\#(value.rawValue)""#))
        #expect(result.consentPolicy?.childAge.adultRangeDeclaration == value)
        #expect(result.warnings.isEmpty)
    }

    @Test func bothKeysRead() throws {
        let result = try ConfigReader().read(Self.policy(#", "childUnderAge": 16, "declinedAgeRange": "notChild""#))
        #expect(result.consentPolicy?.childAge == ChildAgeRule(childUnderAge: 16, declinedIsChild: false))
        #expect(result.warnings.isEmpty)
    }

    @Test(arguments: [
        (#", "childUnderAge": 0"#, "consentPolicy.childUnderAge"),
        (#", "childUnderAge": 99"#, "consentPolicy.childUnderAge"),
        (#", "childUnderAge": "13""#, "consentPolicy.childUnderAge"),
        (#", "declinedAgeRange": "adult""#, "consentPolicy.declinedAgeRange"),
        (#", "declinedAgeRange": false"#, "consentPolicy.declinedAgeRange"),
        (#", "childUnderAg": 16"#, "consentPolicy.childUnderAg"),
        (#", "adultRangeDeclaration": "guardian""#, "consentPolicy.adultRangeDeclaration"),
        (#", "adultRangeDeclaration": true"#, "consentPolicy.adultRangeDeclaration"),
    ])
    func mistakesAreErrorsInEveryModeAndKeepTheDefault(body: String, keyPath: String) throws {
        for mode in ConfigReadingMode.allCases {
            #expect(throws: ConfigError.self) { try ConfigReader(mode: mode).read(Self.policy(body)) }
        }
        let error = try #require(readError(Self.policy(body)))
        #expect(error.errors.map(\.keyPath).contains(keyPath), "\(error.diagnostics)")
    }

    @Test func aNearMissOfDeclinedSuggestsTheValue() throws {
        let error = try #require(readError(Self.policy(#", "declinedAgeRange": "chlid""#)))
        #expect(error.errors.first?.suggestion == "child")
        let declaration = try #require(readError(Self.policy(#", "adultRangeDeclaration": "chekced""#)))
        #expect(declaration.errors.first?.suggestion == "checked")
        #expect(declaration.errors.first?.keyPath == "consentPolicy.adultRangeDeclaration")
    }

    @Test func aMisspelledKeySuggestsAdultRangeDeclaration() throws {
        let error = try #require(readError(Self.policy(#", "adultRangeDeclarations": "checked""#)))
        #expect(error.errors.first?.suggestion == "adultRangeDeclaration", "\(error.diagnostics)")
    }

    @Test func featuregateCheckKnowsAdultRangeDeclarationAndItsValues() throws {
        let directory = URL(filePath: NSTemporaryDirectory())
        let good = try featuregate(
            ["check", "-"], in: directory, input: Self.policy(#", "adultRangeDeclaration": "guardianOrChecked""#))
        #expect(good.status == 0, "\(good.lines)")
        let typo = try featuregate(
            ["check", "-"], in: directory, input: Self.policy(#", "adultRangeDeclaration": "chekced""#))
        #expect(typo.status == 1)
        #expect(
            typo.lines.contains {
                $0.contains("consentPolicy.adultRangeDeclaration") && $0.contains(#"did you mean "checked""#)
            }, "\(typo.lines)")
    }
}
#endif
