#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import Testing

/// `featuregate --version` names the newest release of CHANGELOG.md, so a pinned `rev:` and the tool agree.
@Suite struct ReleaseVersionTests {
    /// The version of the first `## [X.Y.Z] - YYYY-MM-DD` heading: the newest release (`[Unreleased]` is not one).
    static func newestReleasedVersion() throws -> String {
        let changelog = try String(contentsOf: packageRoot.appending(path: "CHANGELOG.md"), encoding: .utf8)
        for line in changelog.split(separator: "\n") where line.hasPrefix("## [") {
            let version = line.dropFirst(4).prefix { $0 != "]" }
            let rest = line.dropFirst(4 + version.count)
            let isRelease =
                version.split(separator: ".").count == 3
                && version.split(separator: ".").allSatisfy { $0.allSatisfy(\.isNumber) }
            guard isRelease else { continue }
            // A tag-ready heading: the version, then the release date.
            #expect(rest.wholeMatch(of: /\] - \d{4}-\d{2}-\d{2}/) != nil, "\(line)")
            return String(version)
        }
        Issue.record("CHANGELOG.md has no released version")
        return ""
    }

    @Test func versionIsTheNewestReleaseOfTheChangelog() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let run = try featuregate(["--version"], in: directory)
        #expect(run.status == 0)
        #expect(run.lines == [try Self.newestReleasedVersion()])
        #expect(run.errorOutput.isEmpty)
    }

    @Test func versionTakesNoArguments() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let run = try featuregate(["--version", "check"], in: directory)
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.errorLines == ["featuregate: error: --version takes no arguments"])
    }

    /// The "In CI" article pins the hooks at the release the tool reports.
    @Test func theInCIArticlePinsTheRelease() throws {
        let article = try String(
            contentsOf: packageRoot.appending(path: "Sources/FeatureGateConfig/FeatureGateConfig.docc/InCI.md"),
            encoding: .utf8)
        #expect(article.contains("rev: v\(try Self.newestReleasedVersion())\n"))
        let hooks = try String(contentsOf: packageRoot.appending(path: ".pre-commit-hooks.yaml"), encoding: .utf8)
        #expect(hooks.contains("rev: v\(try Self.newestReleasedVersion())\n"))
    }
}
#endif
