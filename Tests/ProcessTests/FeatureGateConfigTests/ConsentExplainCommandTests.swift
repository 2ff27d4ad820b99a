#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// `featuregate consent explain`, run as a subprocess: the issue's JSON contract, exit statuses, and the same
/// decisions the library makes.
@Suite struct ConsentExplainCommandTests {
    static let ledger = """
        {"category":"analytics","newStatus":"granted","policyVersion":2,"previousStatus":"unknown","source":"user","time":"2026-01-05T10:00:00.000Z","v":1}
        {"category":"thirdPartySharing","newStatus":"granted","policyVersion":2,"previousStatus":"unknown","source":"user","time":"2026-01-05T10:00:00.000Z","v":1}

        """

    private func fixtures() -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        _ = directory.file("config.json", Data(ConsentPolicyConfigTests.example.utf8))
        _ = directory.file("ledger.jsonl", Data(Self.ledger.utf8))
        _ = directory.file("state.json", FeatureStateRecord(enabledFeatures: [.push]).encoded())
        return directory
    }

    private func explain(_ extra: [String], in directory: TemporaryDirectory) throws -> (ToolRun, [String: Any]?) {
        let run = try featuregate(
            ["consent", "explain", "--config", "config.json", "--ledger", "ledger.jsonl", "--json"] + extra,
            in: directory)
        let object = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        return (run, object)
    }

    @Test func theJSONHasTheIssuesKeysAndValues() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let (run, object) = try explain(["--at", "2026-06-01T10:00:00Z"], in: directory)
        #expect(run.status == 0, "\(run.errorOutput)")
        let categories = try #require(object?["categories"] as? [String: [String: Any]])
        let analytics = try #require(categories["analytics"])
        #expect(analytics["status"] as? String == "granted")
        #expect(analytics["permitted"] as? Bool == true)
        #expect(analytics["decidedAt"] as? String == "2026-01-05T10:00:00.000Z")
        #expect(analytics["source"] as? String == "user")
        #expect(analytics["expiresAt"] as? String == "2027-02-04T10:00:00.000Z")
        #expect(analytics["needsAsking"] as? Bool == false)
        #expect(analytics["reason"] as? String != nil)
        let advertising = try #require(categories["advertising"])
        for key in ["decidedAt", "source", "expiresAt"] { #expect(advertising[key] is NSNull, "\(key)") }
        #expect(advertising["status"] as? String == "unknown")
        let features = try #require(object?["features"] as? [String: Bool])
        #expect(
            features == [
                "analytics": true, "push": true, "tags_and_attributes": true, "in_app_automation": false,
                "message_center": false, "contacts": false, "feature_flags": false,
            ])
    }

    @Test func aGrantExpiresAtItsInstantAndFollowsTheRegion() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let (before, beforeObject) = try explain(["--at", "2027-02-04T09:59:59.999Z"], in: directory)
        #expect(before.status == 0)
        #expect(
            (beforeObject?["categories"] as? [String: [String: Any]])?["analytics"]?["status"] as? String == "granted")
        let (_, optIn) = try explain(["--at", "2027-02-04T10:00:00Z"], in: directory)
        let analytics = (optIn?["categories"] as? [String: [String: Any]])?["analytics"]
        #expect(analytics?["status"] as? String == "expired")
        #expect(analytics?["permitted"] as? Bool == false)
        #expect(analytics?["needsAsking"] as? Bool == true)
        let (_, optOut) = try explain(["--at", "2027-02-04T11:00:00+01:00", "--region", "us-ca"], in: directory)
        #expect((optOut?["categories"] as? [String: [String: Any]])?["analytics"]?["permitted"] as? Bool == true)
    }

    @Test func theChildMarkAndGPCWithholdAndAGrantNeverTurnsOnWhatTheConfigLeavesOff() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let (run, object) = try explain(["--at", "2026-02-01T00:00:00Z", "--gpc", "--child"], in: directory)
        #expect(run.status == 0)
        let categories = object?["categories"] as? [String: [String: Any]]
        #expect(categories?["thirdPartySharing"]?["status"] as? String == "denied")
        #expect(categories?["thirdPartySharing"]?["source"] as? String == "gpc")
        #expect(categories?["advertising"]?["blockedBy"] as? String == "child")
        let features = object?["features"] as? [String: Bool]
        #expect(features?["tags_and_attributes"] == false)
        #expect(features?["contacts"] == false)

        // With the state file, its decisions count: push on, every other flag follows the configuration.
        let (_, withState) = try explain(["--at", "2026-02-01T00:00:00Z", "--state", "state.json"], in: directory)
        #expect((withState?["features"] as? [String: Bool])?["push"] == true)
    }

    @Test func theLibraryDecidesTheSame() async throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let at = try Date("2027-03-01T00:00:00Z", strategy: .iso8601)
        let (_, object) = try explain(["--at", "2027-03-01T00:00:00Z", "--region", "US"], in: directory)
        let policy = try #require(try ConfigReader().read(Data(ConsentPolicyConfigTests.example.utf8)).consentPolicy)
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore(),
            consentPolicy: policy)
        let consent = ConsentManager(
            privacy: privacy, ledger: InMemoryConsentLedger(jsonLines: Data(Self.ledger.utf8)),
            region: ConsentRegion("US"), now: { at })
        let categories = try #require(object?["categories"] as? [String: [String: Any]])
        for (category, decision) in await consent.decisions {
            #expect(categories[category.rawValue]?["status"] as? String == decision.status.rawValue)
            #expect(categories[category.rawValue]?["permitted"] as? Bool == decision.isPermitted)
        }
    }

    @Test func badFilesExitOneAndBadArgumentsExitTwo() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        _ = directory.file(
            "bad.json", Data(ConsentPolicyConfigTests.policy(#"{"categories": {"a": {"grantLifetimeDays": 0}}}"#).utf8))
        let invalid = try featuregate(
            ["consent", "explain", "--config", "bad.json", "--ledger", "ledger.jsonl"], in: directory)
        #expect(invalid.status == 1)
        #expect(invalid.errorOutput.contains("bad.json: error: consentPolicy.categories.a.grantLifetimeDays"))
        let missingState = try featuregate(
            ["consent", "explain", "--config", "config.json", "--ledger", "ledger.jsonl", "--state", "none.json"],
            in: directory)
        #expect(missingState.status == 1)
        #expect(missingState.errorOutput.contains("none.json"))
        let missingLedger = try featuregate(
            ["consent", "explain", "--config", "config.json", "--ledger", "absent.jsonl"], in: directory)
        #expect(missingLedger.status == 0)
        for arguments in [
            ["consent", "explain", "--ledger", "ledger.jsonl"], ["consent", "explain", "--config", "config.json"],
            ["consent", "explain", "--config", "config.json", "--ledger", "l", "--region", "USA"],
            ["consent", "explain", "--config", "config.json", "--ledger", "l", "--at", "2027-02-04"],
            ["consent", "explain", "--config", "config.json", "--ledger", "l", "--chld"], ["consent", "explian"],
        ] {
            #expect(try featuregate(arguments, in: directory).status == 2, "\(arguments)")
        }
    }

    @Test func theTableSaysTheSameAsTheJSON() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        let run = try featuregate(
            [
                "consent", "explain", "--config", "config.json", "--ledger", "ledger.jsonl", "--at",
                "2027-03-01T00:00:00Z",
            ],
            in: directory)
        #expect(run.status == 0)
        #expect(run.lines.contains { $0.hasPrefix("analytics") && $0.contains("expired") && $0.contains("no") })
        #expect(run.lines.contains { $0.hasPrefix("push") && $0.hasSuffix("on") })
    }

    @Test func convertKeepsTheConsentPolicy() throws {
        let directory = fixtures()
        defer { directory.cleanUp() }
        for format in ["xml", "binary", "json"] {
            let run = try featuregate(["convert", "--to", format, "config.json", "-o", "out.\(format)"], in: directory)
            #expect(run.status == 0, "\(format): \(run.errorOutput)")
            let original = try ConfigReader().read(contentsOf: directory.url.appending(path: "config.json"))
            let converted = try ConfigReader().read(contentsOf: directory.url.appending(path: "out.\(format)"))
            #expect(original.consentPolicy != nil)
            #expect(converted.consentPolicy == original.consentPolicy, "\(format)")
            #expect(converted.configuration == original.configuration, "\(format)")
        }
    }
}
#endif
