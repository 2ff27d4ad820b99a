#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateRemote
import Foundation
import PackageTestSupport
import ProcessTestSupport
import RemoteFuzzing
import Testing

/// `featuregate remote check`, run as a subprocess: exit statuses, the JSON contract, and agreement with the library.
@Suite struct RemoteCheckCommandTests {
    static let response = #"""
        {"ok":true,"payloads":[
          {"type":"app_config","timestamp":"2024-01-01T00:00:00.000","data":{
            "disabled_features":["analytics"],
            "disable_features":[
              {"modules":["push","channel"],"sdk_versions":["[17.0,18.0["],
               "app_versions":{"scope":["ios","version"],"value":{"version_matches":"1.0.+"}}},
              {"modules":"all","sdk_versions":["1.0"]}]}},
          {"type":"app_config:ios","timestamp":"2024-01-01T00:00:00Z","data":{"disabled_features":null}}]}
        """#

    func run(_ arguments: [String], payload: String = response) throws -> ToolRun {
        let directory = FileManager.default.temporaryDirectory.appending(path: "remote-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(payload.utf8).write(to: directory.appending(path: "payload.json"))
        return try runBuiltExecutable("featuregate", ["remote", "check"] + arguments, in: directory)
    }

    static let ios = ["--platform", "ios", "--sdk-version", "17.2.0", "--app-version", "1.0.3"]

    @Test func aValidPayloadPrintsTheSortedDisabledNamesAsJSON() throws {
        let run = try run(["payload.json", "--json"] + Self.ios)
        #expect(run.status == 0)
        let object = try run.jsonObject()
        #expect(object["disabled"] as? [String] == ["push"])
        #expect(object["valid"] as? Bool == true)
        let android = try self.run([
            "payload.json", "--json", "--platform", "android", "--sdk-version", "17.2.0",
            "--app-version", "1.0.3",
        ])
        #expect(try android.jsonObject()["disabled"] as? [String] == ["analytics"])
    }

    @Test func allSortsEverySevenNames() throws {
        let run = try run(["payload.json", "--json"] + Self.ios, payload: #"{"disabled_features":["all"]}"#)
        #expect(
            try run.jsonObject()["disabled"] as? [String] == [
                "analytics", "contacts", "feature_flags", "in_app_automation", "message_center", "push",
                "tags_and_attributes",
            ])
    }

    @Test func theReadableOutputSaysWhichRuleMatchedWhichVersion() throws {
        let run = try run(["payload.json"] + Self.ios)
        #expect(run.status == 0)
        #expect(run.output.contains("disable_features[0]: applies"))
        #expect(run.output.contains(#"sdk_versions[0] "[17.0,18.0[" matches SDK 17.2.0"#))
        #expect(run.output.contains("app_versions matches app 1.0.3"))
        #expect(run.output.contains("disable_features[1]: does not apply"))
        #expect(run.lines.last == "disabled: push")
    }

    @Test func anInvalidPayloadExitsOneNamingTheKeyPathWithoutADisabledSet() throws {
        let bad = Self.response.replacingOccurrences(of: #"["1.0"]"#, with: #"["1.a"]"#)
        let plain = try run(["payload.json"] + Self.ios, payload: bad)
        #expect(plain.status == 1)
        #expect(plain.output.contains("disable_features[1].sdk_versions[0]"))
        #expect(!plain.output.contains("disabled:"))
        let json = try run(["payload.json", "--json"] + Self.ios, payload: bad)
        #expect(json.status == 1)
        let object = try json.jsonObject()
        #expect(object["disabled"] == nil)
        #expect(object["keyPath"] as? String == "disable_features[1].sdk_versions[0]")
    }

    @Test func aMissingFileExitsOne() throws {
        #expect(try run(["missing.json"] + Self.ios).status == 1)
    }

    @Test(arguments: [
        ["payload.json", "--platform", "web", "--sdk-version", "1.0", "--app-version", "1.0"],
        ["payload.json", "--platform", "amazon", "--sdk-version", "1.0", "--app-version", "1.0"],
        ["payload.json", "--sdk-version", "1.0", "--app-version", "1.0"],
        ["payload.json", "--platform", "ios", "--app-version", "1.0"],
        ["payload.json", "--platform", "ios", "--sdk-version", "1.0"],
        ["payload.json", "--platform", "ios", "--sdk-version", "17.x", "--app-version", "1.0"],
        ["payload.json", "--platform", "ios", "--sdk-version", "1.0", "--app-version", "1.0-"],
        ["payload.json", "--platform", "ios", "--sdk-version", "1.0", "--app-version", ""],
        ["--platform", "ios", "--sdk-version", "1.0", "--app-version", "1.0"],
        ["payload.json", "other.json", "--platform", "ios", "--sdk-version", "1.0", "--app-version", "1.0"],
        ["payload.json", "--platform", "ios", "--sdk-version", "1.0", "--app-version", "1.0", "--yaml"],
    ])
    func usageErrorsExitTwo(_ arguments: [String]) throws {
        let run = try run(arguments)
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
    }

    @Test func aQualifiedVersionIsAccepted() throws {
        let run = try run([
            "payload.json", "--json", "--platform", "ios", "--sdk-version", "17.2.0-beta1",
            "--app-version", "1.0.3-SNAPSHOT",
        ])
        #expect(run.status == 0)
        #expect(try run.jsonObject()["disabled"] as? [String] == ["push"])
    }

    /// One parser: on generated payloads, valid or not, the tool's answer is the library's.
    @Test func theToolAndTheLibraryAgree() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let target = RemoteConfigTarget(platform: .ios, sdkVersion: "17.2.0", appVersion: "1.0.3")
        for _ in 0..<24 {
            let recipe = (0..<80).map { _ in UInt8.random(in: 0...255, using: &random) }
            let document = String(decoding: RemotePayloadGenerator.document(from: recipe), as: UTF8.self)
            let run = try run(["payload.json", "--json"] + Self.ios, payload: document)
            let object = try run.jsonObject()
            do {
                let decision = try RemoteConfigParser.parse(Data(document.utf8), for: target)
                #expect(run.status == 0, "seed \(seed): \(document)")
                let names = FeatureCatalog.builtIn.names(of: decision.disables.features).sorted()
                #expect(object["disabled"] as? [String] == names, "seed \(seed): \(document)")
            } catch {
                #expect(run.status == 1, "seed \(seed): \(document)")
                #expect(object["keyPath"] as? String == error.keyPath, "seed \(seed): \(document)")
            }
        }
    }
}
#endif
