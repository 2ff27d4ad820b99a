import Foundation
import NoopRuntime
import Testing

/// The identifiers a `GatedEventBuffer` gives events and batches without a system call each.
@Suite struct EventIdentifiersTests {
    /// SipHash-2-4 with 128-bit output, key 00…0f, message 00…(n-1): the reference implementation's
    /// `vectors_sip128` rows 0, 7, 15 and 16 (veorq/SipHash, vectors.h, commit 1a7d041abc95055170c996d9af80887d4046aa5a,
    /// read 2026-11-28), each output's two 64-bit halves as little-endian bytes.
    @Test(arguments: [
        (0, "a3817f04ba25a8e66df67214c7550293"), (7, "a1f1ebbed8dbc153c0b84aa61ff08239"),
        (15, "5493e99933b0a8117e08ec0f97cfc3d9"), (16, "6ee2a4ca67b054bbfd3315bf85230577"),
    ])
    func sipHashMatchesTheReferenceVectors(length: Int, expected: String) {
        let key = (UInt64(0x0706_0504_0302_0100), UInt64(0x0f0e_0d0c_0b0a_0908))
        let message = (0..<length).map { UInt8($0) }
        let (first, second) = SipHash24.hash128(key: key, bytes: message)
        let bytes = withUnsafeBytes(of: (first.littleEndian, second.littleEndian)) { Array($0) }
        #expect(bytes.map { String(format: "%02x", $0) }.joined() == expected)
    }

    @Test func theTwoWordFormHashesTheSixteenBytesOfItsWords() {
        let key = (UInt64(0x0706_0504_0302_0100), UInt64(0x0f0e_0d0c_0b0a_0908))
        let words = (UInt64(0x0706_0504_0302_0100), UInt64(0x0f0e_0d0c_0b0a_0908))
        let bytes = (0..<16).map { UInt8($0) }
        #expect(SipHash24.hash128(key: key, words.0, words.1) == SipHash24.hash128(key: key, bytes: bytes))
    }

    @Test func identifiersAreDistinctVersionFourUUIDsAndDependOnTheKey() {
        let identifiers = EventIdentifiers(key: (1, 2))
        let ids = (0..<100_000).map { identifiers.event(UInt64($0)) }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(1_000) {
            // Version 4 (xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx), as `UUID()` makes them.
            #expect(id.uuid.6 >> 4 == 4)
            #expect(id.uuid.8 >> 6 == 0b10)
        }
        // The same number under the same key is the same identifier: what a retry carries.
        #expect(EventIdentifiers(key: (1, 2)).event(42) == ids[42])
        #expect(EventIdentifiers(key: (1, 3)).event(42) != ids[42])
        // Not the counter in disguise: neighbouring numbers share no half.
        #expect(ids[1].uuid.0 != ids[2].uuid.0 || ids[1].uuid.15 != ids[2].uuid.15)
    }

    @Test func batchKeysNeverRepeatAnEventIdentifierAndRekeyingStartsAnUnrelatedSequence() {
        var identifiers = EventIdentifiers(key: (7, 9))
        let keys = (0..<10_000).map { _ in identifiers.nextBatchKey() }
        let events = Set((0..<10_001).map { identifiers.event(UInt64($0)) })
        #expect(Set(keys).count == keys.count)
        #expect(events.isDisjoint(with: keys))
        #expect(identifiers.batchKeysIssued == 10_000)

        identifiers.rekey()
        #expect(identifiers.batchKeysIssued == 0)
        #expect(!events.contains(identifiers.event(0)))
        #expect(!Set(keys).contains(identifiers.nextBatchKey()))
    }
}
