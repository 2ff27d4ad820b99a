#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The demo's lifetime and region flow, run as a subprocess: a grant expires, a stricter region applies at once, a
/// looser one waits for the next launch, and the dashboard says why.
@Suite struct DemoLifetimeStepsTests {
    @Test func aGrantExpiresAndARegionChangeWithholdsIt() throws {
        let run = try runBuiltExecutable(
            "consent-demo",
            [
                "--config", "Examples/Configs/consent-policy.json", "--region", "US-CA", "--steps",
                "grant:analytics,advance:394,advance:1,dashboard,region:FR,region:US,dashboard",
            ],
            in: packageRoot)
        #expect(run.status == 0, "\(run.errorOutput)")
        let lines = run.lines
        #expect(lines.contains("== step 2: advance:394 — nothing expired"))
        #expect(lines.contains("== step 3: advance:1 — analytics granted -> expired"))
        #expect(lines.contains("consent   advertising unknown, analytics expired, thirdPartySharing unknown"))
        // Expired but unanswered in an opt-out region: permitted; in France (opt-in): withheld at once.
        #expect(lines.contains { $0.contains("dashboard analytics: expired; permitted;") })
        #expect(lines.contains("== step 5: region:FR"))
        #expect(
            lines.contains {
                $0.contains("dashboard analytics: expired; not permitted;") && $0.hasSuffix("blocked: region")
            })
        #expect(lines.contains("== step 6: region:US — looser than before: US applies at the next launch"))
        #expect(lines.filter { $0 == "features  [push]" }.count == 3)
    }
}
#endif
