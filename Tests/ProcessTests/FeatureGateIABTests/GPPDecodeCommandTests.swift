#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import Testing

/// `featuregate gpp decode`, run as a subprocess: the JSON contract, exit statuses, diagnostics.
@Suite struct GPPDecodeCommandTests {
    @Test func jsonHasTheHeaderEverySectionFieldByFieldAndDiagnostics() throws {
        // usca with every field set (iabgpp-es UsCa.test.ts) and uspv1.
        let run = try featuregate(["gpp", "decode", "--json", "DBACTM~1YNN~BVWSSSVY.YA"])
        #expect(run.status == 0)
        let object = try run.jsonObject()
        #expect(Set(object.keys) == ["header", "sections", "diagnostics"])
        let header = try #require(object["header"] as? [String: Any])
        #expect(header["version"] as? Int == 1)
        #expect(header["sectionIDs"] as? [Int] == [6, 8])
        let sections = try #require(object["sections"] as? [String: [String: Any]])
        #expect(Set(sections.keys) == ["uspv1", "usca"])
        let usca = try #require(sections["usca"])
        #expect(
            Set(usca.keys) == [
                "Version", "SaleOptOutNotice", "SharingOptOutNotice", "SensitiveDataLimitUseNotice", "SaleOptOut",
                "SharingOptOut", "SensitiveDataProcessing", "KnownChildSensitiveDataConsents", "PersonalDataConsents",
                "MspaCoveredTransaction", "MspaOptOutOptionMode", "MspaServiceProviderMode", "SubsectionType", "Gpc",
            ])
        #expect(usca["SaleOptOut"] as? Int == 1)
        #expect(usca["SensitiveDataProcessing"] as? [Int] == [2, 1, 0, 2, 1, 0, 2, 1, 0])
        #expect(usca["Gpc"] as? Bool == true)
        let uspv1 = try #require(sections["uspv1"])
        #expect(uspv1["Version"] as? Int == 1)
        #expect(
            uspv1.filter { $0.key != "Version" } as? [String: String] == [
                "Notice": "Y", "OptOutSale": "N", "LspaCovered": "N",
            ])
        #expect((object["diagnostics"] as? [Any])?.isEmpty == true)
        // Members come in the string's order.
        #expect(run.output.contains(#""usca":{"Version":1,"SaleOptOutNotice":1,"SharingOptOutNotice":1"#))
    }

    @Test func aMalformedSectionExitsOneNamingSectionAndFieldAndKeepsTheOthers() throws {
        let run = try featuregate(["gpp", "decode", "--json", "DBACTM~1YNN~BV2SSSVY"])
        #expect(run.status == 1)
        let object = try run.jsonObject()
        let sections = try #require(object["sections"] as? [String: Any])
        #expect(Set(sections.keys) == ["uspv1"])
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?["severity"] as? String == "error")
        #expect(diagnostics.first?["section"] as? String == "usca")
        #expect(diagnostics.first?["field"] as? String == "SaleOptOut")
        #expect((diagnostics.first?["message"] as? String)?.contains("at bit 12") == true)
        #expect(Set(diagnostics.first?.keys ?? [:].keys) == ["severity", "section", "field", "message"])
    }

    @Test func aMalformedHeaderHasANullHeader() throws {
        let run = try featuregate(["gpp", "decode", "--json", "CBABLA~BAAAAAAAAQA.QA"])
        #expect(run.status == 1)
        let object = try run.jsonObject()
        #expect(object["header"] is NSNull)
        #expect((object["sections"] as? [String: Any])?.isEmpty == true)
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["section"] as? String == "header")
        #expect(diagnostics.first?["field"] as? String == "Type")
    }

    @Test func aSectionFeatureGateDoesNotDecodeIsAWarning() throws {
        // tcfeuv2 (2) beside uspv1 (6).
        let run = try featuregate([
            "gpp", "decode", "--json", "DBACNYA~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN",
        ])
        #expect(run.status == 0)
        let diagnostics = try #require(try run.jsonObject()["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.map { $0["section"] as? String } == ["tcfeuv2"])
        #expect(diagnostics.first?["severity"] as? String == "warning")
        #expect(diagnostics.first?["field"] is NSNull)
    }

    @Test func textListsEveryFieldUnderItsSection() throws {
        // iabgpp-es's usin string (release 3.2 layout): the core, then the Sensitive Data Consents subsection.
        let run = try featuregate(["gpp", "decode", "DBABUY~BVVV.kkk"])
        #expect(run.status == 0)
        #expect(run.lines.first == "version: 1")
        #expect(run.lines.contains("sectionIDs: 25 (usin)"))
        #expect(run.lines.contains("usin.MspaVersion: 1"))
        #expect(run.lines.contains("usin.MspaMode: 1"))
        #expect(run.lines.contains("usin.SaleOptOut: 1"))
        #expect(run.lines.contains("usin.SensitiveDataProcessing: [2,1,0,2,1,0,2,1]"))
        #expect(!run.lines.contains { $0.hasPrefix("usin.Gpc") || $0.hasPrefix("warning") })
    }

    @Test func aJuneDraftStringIsReadAsTheDraftWithAWarningNamingIt() throws {
        let run = try featuregate(["gpp", "decode", "DBABUY~BVVVkkk.YA"])
        #expect(run.status == 0)
        #expect(run.lines.contains("usin.SaleOptOut: 1"))
        #expect(run.lines.contains("usin.Gpc: true"))
        #expect(run.lines.contains { $0.hasPrefix("warning: usin: ") && $0.contains("June 2026 draft") })
    }

    @Test func usageErrorsExitTwo() throws {
        #expect(try featuregate(["gpp", "decode"]).status == 2)
        #expect(try featuregate(["gpp", "decode", "DBABLA~BAAAAAAAAQA.QA", "extra"]).status == 2)
        #expect(try featuregate(["gpp"]).status == 2)
        #expect(try featuregate(["gpp", "encode"]).status == 2)
        let help = try featuregate(["gpp", "decode", "--help"])
        #expect(help.status == 0 && help.output.contains("featuregate gpp decode [--json] [--] STRING"))
    }
}
#endif
