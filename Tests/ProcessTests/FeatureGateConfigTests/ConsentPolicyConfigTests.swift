#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// `consentPolicy` in config files: the issue's example reads into the Swift policy, and every mistake is a typed
/// diagnostic with its key path, failing closed.
@Suite struct ConsentPolicyConfigTests {
    static let example = """
        {
          "enabledFeatures": ["push", "analytics", "tags_and_attributes"],
          "consentPolicy": {
            "version": 2,
            "categories": {
              "analytics": { "features": ["analytics"], "grantLifetimeDays": 395, "refusalLifetimeDays": 180 },
              "advertising": { "features": [], "childProhibited": true, "saleOrSharing": true },
              "thirdPartySharing": { "features": ["tags_and_attributes"], "saleOrSharing": true }
            },
            "unanswered": { "default": "optIn", "US": "optOut", "US-CA": "optOut" }
          }
        }
        """

    static func policy(_ body: String) -> String {
        #"{"enabledFeatures": [], "consentPolicy": "# + body + "}"
    }

    @Test func theIssuesExampleBuildsTheSwiftPolicy() throws {
        let result = try ConfigReader().read(Data(Self.example.utf8))
        let expected = ConsentPolicy(
            version: 2,
            features: [.analytics: .analytics, .advertising: [], .thirdPartySharing: .tagsAndAttributes],
            grantLifetimeDays: [.analytics: 395], refusalLifetimeDays: [.analytics: 180],
            childProhibited: [.advertising], saleOrSharing: [.advertising, .thirdPartySharing],
            unanswered: UnansweredConsentRules(
                default: .optIn, regions: [ConsentRegion("US")!: .optOut, ConsentRegion("US-CA")!: .optOut]))
        #expect(result.consentPolicy == expected)
        #expect(result.warnings.isEmpty)
        #expect(result.ignoredKeys.isEmpty)
    }

    @Test func theSamePolicyReadsFromAPlistWithACustomFlag() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>enabledFeatures</key><array/>
            <key>consentPolicy</key><dict>
              <key>categories</key><dict>
                <key>crashes</key><dict>
                  <key>features</key><array><string>crash_reports</string></array>
                  <key>grantLifetimeDays</key><integer>30</integer>
                </dict>
              </dict>
              <key>unanswered</key><dict><key>us-ca</key><string>optOut</string></dict>
            </dict>
            </dict></plist>
            """
        let result = try ConfigReader(catalog: customCatalog).read(Data(plist.utf8))
        let policy = try #require(result.consentPolicy)
        #expect(policy.version == 1)
        #expect(policy.features == [ConsentCategory("crashes"): crashReports])
        #expect(policy.grantLifetimeDays == [ConsentCategory("crashes"): 30])
        #expect(policy.unanswered.rule(for: ConsentRegion("US-CA")) == .optOut)
        #expect(policy.unanswered.rule(for: ConsentRegion("US")) == .optIn)
    }

    @Test(arguments: [
        (#"{"categories": {"a": {"grantLifetimeDays": 0}}}"#, "consentPolicy.categories.a.grantLifetimeDays"),
        (#"{"categories": {"a": {"refusalLifetimeDays": 1.5}}}"#, "consentPolicy.categories.a.refusalLifetimeDays"),
        (#"{"categories": {"a": {"grantLifetimeDays": -3}}}"#, "consentPolicy.categories.a.grantLifetimeDays"),
        (#"{"categories": {"a": {"childProhibited": "yes"}}}"#, "consentPolicy.categories.a.childProhibited"),
        (#"{"categories": {"a": {"features": "analytics"}}}"#, "consentPolicy.categories.a.features"),
        (#"{"categories": {"a": {"features": ["pussh"]}}}"#, "consentPolicy.categories.a.features[0]"),
        (#"{"categories": {"a": {"saleOrSharng": true}}}"#, "consentPolicy.categories.a.saleOrSharng"),
        (#"{"categories": {}, "unanswered": {"USA": "optIn"}}"#, "consentPolicy.unanswered.USA"),
        (#"{"categories": {}, "unanswered": {"US": "optout"}}"#, "consentPolicy.unanswered.US"),
        (#"{"categories": {}, "unanswered": {"US": "optIn", "us": "optOut"}}"#, "consentPolicy.unanswered.us"),
        (#"{"categories": {}, "version": "2"}"#, "consentPolicy.version"),
        (#"{"categories": {}, "extra": 1}"#, "consentPolicy.extra"),
        (#"{"unanswered": {}}"#, "consentPolicy.categories"),
        (#"[]"#, "consentPolicy"),
        (#"{"categories": {"a": {}, "a": {"features": ["push"]}}}"#, "consentPolicy.categories.a"),
    ])
    func mistakesAreErrorsWithTheirKeyPath(policy: String, keyPath: String) throws {
        let error = try #require(readError(Data(Self.policy(policy).utf8)))
        #expect(error.errors.map(\.keyPath).contains(keyPath), "\(error.diagnostics)")
    }

    @Test func lenientModeDropsUnknownKeysAndNamesButNotMisspellingsOrBadRegions() throws {
        let lenient = ConfigReader(mode: .lenient)
        let result = try lenient.read(
            Data(Self.policy(#"{"extra": 1, "categories": {"a": {"features": ["bogus", "push"]}}}"#).utf8))
        #expect(result.consentPolicy?.features == [ConsentCategory("a"): .push])
        #expect(result.warnings.map(\.keyPath) == ["consentPolicy.extra", "consentPolicy.categories.a.features[0]"])
        for risky in [
            #"{"categories": {"a": {"childProhibted": true}}}"#, #"{"categories": {}, "unanswered": {"U$": "optIn"}}"#,
        ] {
            #expect(throws: ConfigError.self) { try lenient.read(Data(Self.policy(risky).utf8)) }
            #expect(throws: ConfigError.self) {
                try ConfigReader(mode: .airshipCompatible).read(Data(Self.policy(risky).utf8))
            }
        }
    }

    @Test func aMisspelledTopLevelKeyIsAnErrorInEveryMode() {
        for mode in ConfigReadingMode.allCases {
            let error = readError(Data(#"{"enabledFeatures": [], "consent_policy": {"categories": {}}}"#.utf8), mode)
            #expect(error?.errors.map(\.suggestion) == ["consentPolicy"])
        }
    }
}
#endif
