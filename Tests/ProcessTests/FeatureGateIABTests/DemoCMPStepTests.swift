#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The demo's `cmp:FILE` step, run as a subprocess on the example key files.
@Suite struct DemoCMPStepTests {
    @Test func theCMPStepShowsTheCategoriesAndFeaturesItSets() throws {
        let run = try runBuiltExecutable(
            "consent-demo",
            ["--steps", "cmp:Examples/CMP/eu-analytics-only.json,cmp:Examples/CMP/us-opted-out.json"],
            in: packageRoot)
        #expect(run.status == 0, "\(run.errorOutput)")
        let lines = run.lines
        #expect(
            lines.contains(
                "== step 1: cmp:Examples/CMP/eu-analytics-only.json — CMP says advertising denied, analytics granted; "
                    + "2 changes recorded (source cmp)"))
        #expect(lines.contains("features  [analytics, tags_and_attributes]"))
        #expect(
            lines.contains(
                "== step 2: cmp:Examples/CMP/us-opted-out.json — CMP says advertising denied, thirdPartySharing "
                    + "denied; 1 change recorded (source cmp)"))
        #expect(lines.contains("consent   advertising denied, analytics granted, thirdPartySharing denied"))
    }

    @Test func anUnreadableKeyFileAppliesNothing() throws {
        let run = try runBuiltExecutable("consent-demo", ["--steps", "cmp:/no/such/keys.json"], in: packageRoot)
        #expect(run.status == 0)
        #expect(
            run.lines.contains {
                $0.hasSuffix("cannot read /no/such/keys.json as a JSON object of CMP keys; nothing applied")
            })
        #expect(run.lines.contains("consent   advertising unknown, analytics unknown, thirdPartySharing unknown"))
    }
}
#endif
