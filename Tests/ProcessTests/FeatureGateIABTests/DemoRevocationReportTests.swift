#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The demo's revoke-all report, run as a subprocess: the receipt names every subsystem the runtime purged.
@Suite struct DemoRevocationReportTests {
    @Test func theRevokeAllReportListsEverySubsystemTheRuntimePurged() throws {
        for _ in 0..<3 {
            let run = try runBuiltExecutable("consent-demo", [], in: packageRoot)
            #expect(run.status == 0, "\(run.errorOutput)")
            let lines = run.lines
            // `runtime   #7 analytics: purged 1 file, 0 items, 1 identifier`, after the revoke-all step began.
            let revokeStep = try #require(lines.firstIndex { $0.hasPrefix("== step") && $0.contains("revoke-all") })
            let purgedByTheRuntime = Set(
                lines[revokeStep...].compactMap { line -> String? in
                    guard line.hasPrefix("runtime "), line.contains(": purged ") else { return nil }
                    return line.split(separator: " ").first { $0.hasSuffix(":") }.map { String($0.dropLast()) }
                })
            // `  purged      analytics: 1 file(s) …`, then one indented line per further subsystem.
            let reportStart = try #require(lines.firstIndex(of: "revoke-all report"))
            let inReport = Set(
                lines[reportStart...].prefix { !$0.hasPrefix("  anonymous") }.compactMap { line -> String? in
                    let trimmed = line.replacingOccurrences(of: "  purged", with: "")
                        .trimmingCharacters(in: .whitespaces)
                    guard line.contains(" file(s)"), let colon = trimmed.firstIndex(of: ":") else { return nil }
                    return String(trimmed[..<colon])
                })
            #expect(!purgedByTheRuntime.isEmpty)
            #expect(purgedByTheRuntime.contains("analytics"))
            #expect(inReport == purgedByTheRuntime)
        }
    }
}
#endif
