#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `featuregate` given hostile inputs: a FIFO or a huge file never hangs it or fills its memory, and text from a file
/// reaches the terminal escaped, secrets not at all.
@Suite struct HostileInputCommandTests {
    private func sparse(_ url: URL, size: Int) {
        let fd = open(url.path(percentEncoded: false), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0)
        #expect(ftruncate(fd, off_t(size)) == 0)
        close(fd)
    }

    private func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
    }

    @Test func aFIFOOrAHugeFileAsInputIsAnErrorNotAHang() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("clean.json", Data(json(enabled: #"["push"]"#).utf8))
        #expect(mkfifo(directory.url.appending(path: "fifo").path(percentEncoded: false), 0o600) == 0)
        sparse(directory.url.appending(path: "huge"), size: 2 * 1024 * 1024 * 1024)

        let check = try featuregate(["check", "fifo"], in: directory.url)
        #expect(check.status == 1)
        #expect(check.lines == ["fifo: error: (root): cannot read the file: found a FIFO, expected a regular file"])

        for state in ["fifo", "huge"] {
            let explain = try featuregate(["explain", "clean.json", "--state", state], in: directory.url)
            #expect(explain.status == 1, "\(state)")
            #expect(explain.errorLines.count == 1, "\(state)")
        }
        let hugeState = try featuregate(["explain", "clean.json", "--state", "huge"], in: directory.url)
        #expect(hugeState.errorOutput.contains("larger than \(FileFeatureStore.maximumRecordSize) bytes"))

        for keys in ["fifo", "huge"] {
            let apply = try featuregate(["tcf", "apply", "--keys", keys, "--json"], in: directory.url)
            let diagnostics = try apply.jsonObject()["diagnostics"] as? [[String: String]]
            #expect(diagnostics?.first?["message"]?.hasPrefix("cannot read the key file") == true, "\(keys)")
        }
    }

    @Test func keysAndValuesFromAConfigAreEscapedAndSecretsAreNeverEchoed() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        // A value FeatureGate does not read, which a parse error used to quote.
        _ = directory.file(
            "secret.plist",
            Data(
                plist(
                    "<key>enabledFeatures</key><array/>\n<key>developmentAppSecret</key><integer>s3cr3t</integer>"
                ).utf8))
        let secret = try featuregate(["check", "secret.plist"], in: directory.url)
        #expect(secret.status == 1)
        #expect(
            secret.lines == [
                "secret.plist: error: (root): line 5, column 32: <integer> holds 6 characters that are not a decimal integer"
            ])

        // The same for a <real>, in every command that reads the file.
        _ = directory.file(
            "real.plist",
            Data(
                plist("<key>enabledFeatures</key><array/>\n<key>developmentAppSecret</key><real>S3CR3T-dev-1</real>")
                    .utf8))
        for command in [["check"], ["check", "--json"], ["explain"], ["convert", "--to", "json"]] {
            let run = try featuregate(command + ["real.plist"], in: directory.url)
            #expect(run.status == 1, "\(command)")
            #expect(!(run.output + run.errorOutput).contains("S3CR3T"), "\(command)")
            #expect(
                (run.output + run.errorOutput).contains("<real> holds 12 characters that are not a decimal number"),
                "\(command)")
        }

        _ = directory.file(
            "crafted.json", Data(#"{"enabledFeatures": ["push\u001b[2J\nx"], "enabledFeatur\n\u001b": 1}"#.utf8))
        let text = try featuregate(["check", "crafted.json"], in: directory.url)
        #expect(text.status == 1)
        #expect(!hasControlCharacters(text.output))
        #expect(text.lines.count == 2)
        #expect(text.output.contains(#"unknown feature name "push\u{1B}[2J\nx""#))
        let json = try featuregate(["check", "--json", "crafted.json"], in: directory.url)
        #expect(!hasControlCharacters(json.output))
        #expect(json.lines.count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let diagnostics = object?["diagnostics"] as? [[String: Any]]
        // JSON keeps the key as it was, its control characters written as JSON escapes.
        #expect(diagnostics?.contains { $0["keyPath"] as? String == "enabledFeatur\n\u{1B}" } == true)
    }

    @Test func refusedCategoriesInAStateFileAreEscaped() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = directory.file("clean.json", Data(json(enabled: #"["push"]"#).utf8))
        let record = FeatureStateRecord(
            enabledFeatures: [], decidedFeatures: [], deniedConsentCategories: [ConsentCategory("x\u{1B}[2J\nforged")])
        _ = directory.file("state.json", record.encoded())
        let run = try featuregate(["explain", "clean.json", "--state", "state.json"], in: directory.url)
        #expect(run.status == 0)
        #expect(!hasControlCharacters(run.output))
        #expect(run.output.contains(#"x\u{1B}[2J\nforged"#))
    }

    @Test func cmpKeyNamesAndValuesAreEscapedAndCut() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let long = String(repeating: "2", count: 5000)
        _ = directory.file(
            "keys.json",
            Data(
                """
                {"IABTCF_gdprApplies": 1, "evil\\u001b[2J\\nkey": "v\\u001b", "IABTCF_PurposeConsents": "0\\u001b\(long)",
                 "IABGPP_GppSID": "\\u001b\\n"}
                """.utf8))
        let run = try featuregate(["tcf", "apply", "--keys", "keys.json"], in: directory.url)
        #expect(!hasControlCharacters(run.output))
        #expect(run.output.contains(#"evil\u{1B}[2J\nkey: warning: not a key FeatureGate reads; ignored"#))
        #expect(run.output.contains("(5002 bytes)"))
        #expect(run.output.count < 2000)
    }
}
#endif
