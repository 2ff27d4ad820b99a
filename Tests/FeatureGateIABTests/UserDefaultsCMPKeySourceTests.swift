import FeatureGate
import FeatureGateIAB
import Foundation
import Testing

/// The CMP's keys read from `UserDefaults`, on every platform (Linux Foundation has `UserDefaults` too).
@Suite struct UserDefaultsCMPKeySourceTests {
    @Test func keysReadAsTheCMPWroteThemAndOtherTypesAsMalformedText() throws {
        let suite = "featuregate-cmp-tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set(1, forKey: "IABTCF_gdprApplies")
        defaults.set("CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA", forKey: "IABTCF_TCString")
        defaults.set(Data([1]), forKey: "IABTCF_PurposeConsents")
        let source = UserDefaultsCMPKeySource(defaults)
        #expect(source.isReadable)
        #expect(source.cmpValue(forKey: "IABTCF_gdprApplies") == .number(1))
        #expect(
            source.cmpValue(forKey: "IABTCF_TCString") == .string("CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"))
        #expect(source.cmpValue(forKey: "IABTCF_CmpSdkID") == nil)
        // Data is no CMP value: passed on as text, which the key's reader then rejects as malformed.
        if case .string = source.cmpValue(forKey: "IABTCF_PurposeConsents") {
        } else {
            Issue.record("a Data value should read as its description")
        }
        #expect(!UserDefaultsCMPKeySource(defaults, isDataAvailable: { false }).isReadable)
    }
}
