import FeatureGate
import Testing

@Suite struct MinimizeTests {
    @Test(arguments: [
        ("192.0.2.77", "192.0.2.0"),
        ("0.0.0.0", "0.0.0.0"),
        ("255.255.255.255", "255.255.255.0"),
        ("10.1.2.0", "10.1.2.0"),
    ])
    func ipv4IsTruncatedToSlash24(input: String, expected: String) {
        #expect(Minimize.truncateIPv4(input) == expected)
        #expect(Minimize.truncateIPAddress(input) == expected)
    }

    @Test(arguments: [
        ("2001:db8:abcd:12::1", "2001:db8:abcd::"),
        ("2001:0db8:abcd:ffff:ffff:ffff:ffff:ffff", "2001:db8:abcd::"),
        ("::1", "::"),
        ("::", "::"),
        ("fe80::1%en0", "fe80::"),
        ("2001:db8:ab::", "2001:db8:ab::"),
        ("::ffff:192.0.2.77", "::ffff:192.0.2.0"),
    ])
    func ipv6IsTruncatedToSlash48(input: String, expected: String) {
        #expect(Minimize.truncateIPv6(input) == expected)
        #expect(Minimize.truncateIPAddress(input) == expected)
    }

    @Test(arguments: [
        "", " 192.0.2.1", "192.0.2", "192.0.2.256", "01.2.3.4", "1.2.3.4.5", "2001:db8::g", ":::", "host.example",
        "1.2.3.4/24",
    ])
    func anythingElseIsDroppedNotPassedThrough(input: String) {
        #expect(Minimize.truncateIPAddress(input) == nil)
    }

    @Test func coordinatesSnapDownToTheGrid() throws {
        let coarse = try #require(Minimize.coarsen(latitude: 52.520_008, longitude: 13.404_954))
        #expect(coarse.latitude == 52.52 && coarse.longitude == 13.4)
        let south = try #require(Minimize.coarsen(latitude: -33.868_8, longitude: -151.209_3, decimals: 1))
        #expect(south.latitude == -33.9 && south.longitude == -151.3)
        let whole = try #require(Minimize.coarsen(latitude: 0.999, longitude: 179.999, decimals: 0))
        #expect(whole.latitude == 0 && whole.longitude == 179)
        #expect(Minimize.coarsen(latitude: .nan, longitude: 0) == nil)
        #expect(Minimize.coarsen(latitude: 91, longitude: 0) == nil)
        #expect(Minimize.coarsen(latitude: 0, longitude: -180.5) == nil)
        #expect(Minimize.coarsen(latitude: 0, longitude: 0, decimals: 7) == nil)
    }

    /// A keyed test hasher (not cryptographic): enough to check the pseudonymizer's plumbing.
    struct XORHasher: KeyedHasher {
        let key: [UInt8]
        func authenticationCode(for message: [UInt8]) -> [UInt8] {
            var code = [UInt8](repeating: 0, count: 4)
            for (index, byte) in message.enumerated() { code[index % 4] ^= byte ^ key[index % key.count] }
            return code
        }
    }

    @Test func pseudonymsAreStablePerKeyAndChangeWithTheKey() {
        let first = Pseudonymizer(hasher: XORHasher(key: [1, 2, 3]))
        let second = Pseudonymizer(hasher: XORHasher(key: [9, 9, 9]))
        #expect(first.pseudonym(for: "user-42") == first.pseudonym(for: "user-42"))
        #expect(first.pseudonym(for: "user-42") != second.pseudonym(for: "user-42"))
        #expect(first.pseudonym(for: "abcd") == "60606065")
        #expect(first.pseudonym(for: "user-42").count == 8)
    }
}
