import Foundation

/// Where a ``GatedEventBuffer``'s event identifiers and batch keys come from, without a system call each: a random
/// 128-bit key drawn once (and again after every revocation), and counters, mixed by SipHash-2-4 (a keyed
/// pseudorandom function) into version 4 UUIDs.
///
/// Foundation's `UUID()` reads `/dev/urandom` on Linux (open, read, close) for every identifier, and
/// `SystemRandomNumberGenerator` makes one `getrandom` call per number: neither belongs in `track`. Here `track`
/// only counts (an event's number is its place in the sequence); its identifier is computed when the event leaves
/// the buffer's ring for a batch, from its number, never from its data. Identifiers do not repeat within a key
/// (distinct inputs of a pseudorandom function) and look random without the key; the key is replaced on every
/// revocation, so nothing links the events tracked after a revocation to those before it.
package struct EventIdentifiers {
    private var key: (UInt64, UInt64)
    /// How many batch keys this key has made.
    package private(set) var batchKeysIssued: UInt64 = 0

    /// Draws a random key (two `getrandom` calls on Linux).
    package init() {
        key = Self.randomKey()
    }

    /// A key given by a test.
    package init(key: (UInt64, UInt64)) {
        self.key = key
    }

    /// Draws a new key: what is tracked from now on cannot be linked to what was tracked before.
    package mutating func rekey() {
        key = Self.randomKey()
        batchKeysIssued = 0
    }

    /// The identifier of the event numbered `sequence` under the current key.
    package func event(_ sequence: UInt64) -> UUID {
        uuid(domain: 0, sequence)
    }

    /// A new batch's idempotency key.
    package mutating func nextBatchKey() -> UUID {
        batchKeysIssued &+= 1
        return uuid(domain: 1, batchKeysIssued)
    }

    private func uuid(domain: UInt64, _ counter: UInt64) -> UUID {
        let (high, low) = SipHash24.hash128(key: key, domain, counter)
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40  // version 4
            raw[8] = raw[8] & 0x3F | 0x80  // RFC 4122 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }

    private static func randomKey() -> (UInt64, UInt64) {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }
}

/// SipHash-2-4 with a 128-bit output (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012), over a
/// message of two little-endian 64-bit words.
package enum SipHash24 {
    package static func hash128(key: (UInt64, UInt64), _ first: UInt64, _ second: UInt64) -> (UInt64, UInt64) {
        var state = State(key: key)
        state.compress(first)
        state.compress(second)
        // The final block: the message length (16 bytes) in the top byte, no bytes left over.
        state.compress(16 << 56)
        return state.finish()
    }

    /// Hashes `bytes` (any length) to 128 bits: the reference's form, for its test vectors.
    package static func hash128(key: (UInt64, UInt64), bytes: [UInt8]) -> (UInt64, UInt64) {
        var state = State(key: key)
        var index = 0
        while index + 8 <= bytes.count {
            var word: UInt64 = 0
            for offset in 0..<8 { word |= UInt64(bytes[index + offset]) << (8 * offset) }
            state.compress(word)
            index += 8
        }
        var last = UInt64(bytes.count & 0xFF) << 56
        for offset in 0..<(bytes.count - index) { last |= UInt64(bytes[index + offset]) << (8 * offset) }
        state.compress(last)
        return state.finish()
    }

    private struct State {
        var v0: UInt64
        var v1: UInt64
        var v2: UInt64
        var v3: UInt64

        package init(key: (UInt64, UInt64)) {
            v0 = key.0 ^ 0x736f_6d65_7073_6575
            v1 = key.1 ^ 0x646f_7261_6e64_6f6d ^ 0xEE
            v2 = key.0 ^ 0x6c79_6765_6e65_7261
            v3 = key.1 ^ 0x7465_6462_7974_6573
        }

        mutating func compress(_ word: UInt64) {
            v3 ^= word
            rounds(2)
            v0 ^= word
        }

        /// The finalization of the 128-bit output: the first and second 64-bit halves.
        mutating func finish() -> (UInt64, UInt64) {
            v2 ^= 0xEE
            rounds(4)
            let first = v0 ^ v1 ^ v2 ^ v3
            v1 ^= 0xDD
            rounds(4)
            return (first, v0 ^ v1 ^ v2 ^ v3)
        }

        mutating func rounds(_ count: Int) {
            for _ in 0..<count {
                v0 &+= v1
                v1 = v1.rotated(13) ^ v0
                v0 = v0.rotated(32)
                v2 &+= v3
                v3 = v3.rotated(16) ^ v2
                v0 &+= v3
                v3 = v3.rotated(21) ^ v0
                v2 &+= v1
                v1 = v1.rotated(17) ^ v2
                v2 = v2.rotated(32)
            }
        }
    }
}

extension UInt64 {
    fileprivate func rotated(_ count: UInt64) -> UInt64 {
        self << count | self >> (64 - count)
    }
}
