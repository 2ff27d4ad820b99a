import FeatureGate
import Foundation
import Testing

// The CryptoKit hasher against RFC 4231's HMAC-SHA256 vectors, where CryptoKit exists (Apple platforms), and the
// UserDefaults store and reader through a real PrivacyManager, everywhere (Linux Foundation has UserDefaults).

#if canImport(CryptoKit)
@Suite struct HMACSHA256HasherTests {
    /// RFC 4231, section 4: key, data, HMAC-SHA-256 (test case 5's is truncated to 128 bits there).
    static let vectors: [(key: [UInt8], data: [UInt8], code: String)] = [
        (
            Array(repeating: 0x0B, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            Array(repeating: 0xAA, count: 20), Array(repeating: 0xDD, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            Array(1...25), Array(repeating: 0xCD, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (Array(repeating: 0x0C, count: 20), Array("Test With Truncation".utf8), "a3b6167473100ee06e0c796c2955552b"),
        (
            Array(repeating: 0xAA, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            Array(repeating: 0xAA, count: 131),
            Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
                    + "be hashed before being used by the HMAC algorithm.").utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ]

    @Test func authenticationCodesMatchRFC4231() {
        for (index, vector) in Self.vectors.enumerated() {
            let code = HMACSHA256Hasher(key: vector.key).authenticationCode(for: vector.data)
            #expect(code.count == 32, "test case \(index + 1)")
            let hex = code.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined()
            #expect(hex.hasPrefix(vector.code), "test case \(index + 1)")
        }
        let pseudonym = Pseudonymizer(hasher: HMACSHA256Hasher(key: Self.vectors[1].key))
        #expect(pseudonym.pseudonym(for: "what do ya want for nothing?") == Self.vectors[1].code)
    }
}
#endif

@Suite struct UserDefaultsFeatureStoreTests {
    @Test func aRecordRoundTripsThroughAPrivacyManagerAndIsRemoved() throws {
        let suite = "featuregate-tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        let store = UserDefaultsFeatureStore(defaults: defaults, key: "features")
        #expect(try store.load() == nil)

        let first = manager([], store: store)
        first.enableFeatures([.push, .analytics])
        #expect(defaults.data(forKey: "features") != nil)
        let second = manager([], store: store)
        #expect(second.enabledFeatures == [.push, .analytics])

        try store.save(Data("record".utf8))
        #expect(try store.load() == Data("record".utf8))
        try store.remove()
        #expect(try store.load() == nil)
        #expect(defaults.object(forKey: "features") == nil)
    }

    /// A save is on disk when it returns: a second process (here, a fresh read of the suite's domain after the
    /// in-process cache is dropped) finds it. On Linux this needs `synchronize()`, which the store calls.
    @Test func aSaveIsPersistedForTheNextLaunch() throws {
        let suite = "featuregate-tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        try UserDefaultsFeatureStore(defaults: defaults, key: "features").save(Data("saved".utf8))
        let domain = try #require(UserDefaults(suiteName: suite)?.persistentDomain(forName: suite))
        #expect(domain["features"] as? Data == Data("saved".utf8))
    }
}

@Suite struct UserDefaultsReaderTests {
    @Test func valuesAreClassifiedAndAMissingKeyIsAbsentOnlyWhileDataIsAvailable() throws {
        let suite = "featuregate-tests-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set("yes", forKey: "string")
        defaults.set(7, forKey: "integer")
        defaults.set(Data([1, 2]), forKey: "data")
        let reader = UserDefaultsReader(defaults, storeName: "suite")
        #expect(try reader.value(forKey: "string") == .string("yes"))
        #expect(try reader.value(forKey: "integer") == .integer(7))
        #expect(try reader.value(forKey: "data") == .data(Data([1, 2])))
        #expect(try reader.value(forKey: "missing") == nil)

        let locked = UserDefaultsReader(defaults, storeName: "suite", isDataAvailable: { false })
        #expect(throws: DefaultsReadError.self) { try locked.value(forKey: "missing") }
        #expect(try locked.value(forKey: "integer") == .integer(7))
    }
}
