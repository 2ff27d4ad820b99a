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

    /// `UserDefaults.didChangeNotification` fires only for this process's changes: the app names the moments another
    /// process may have written the keys (becoming active), and those refresh too.
    @Test func theNotificationsPassedInAlsoRefreshTheKeys() async throws {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let suite = "featuregate-cmp-tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        let reads = LockedValue(0)
        let source = CMPConsentSource(consentManager: consent, keys: ReadCountingKeys(defaults: defaults, reads: reads))
        let becameActive = Notification.Name("featuregate-tests.became-active-\(UUID().uuidString)")
        let token = source.refreshOnUserDefaultsChanges(settle: .milliseconds(1), alsoOn: [becameActive])
        defer { token.cancel() }
        NotificationCenter.default.post(name: becameActive, object: nil)
        // Sleeping, not blocking: the refresh runs on the same cooperative threads as this test. Counted in turns,
        // not wall time: while other tests block those threads, neither this loop nor the refresh moves.
        for _ in 0..<5_000 where reads.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(reads.withLock { $0 } > 0)
    }
}

/// The defaults' keys, counting reads.
private final class ReadCountingKeys: CMPKeyValueSource {
    let keys: UserDefaultsCMPKeySource
    let reads: LockedValue<Int>
    init(defaults: UserDefaults, reads: LockedValue<Int>) {
        keys = UserDefaultsCMPKeySource(defaults)
        self.reads = reads
    }
    func cmpValue(forKey key: String) -> CMPValue? {
        reads.withLock { $0 += 1 }
        return keys.cmpValue(forKey: key)
    }
}
