/// Reads big-endian bit fields out of a base64url segment, one 6-bit character at a time.
///
/// Decoding characters straight to 6-bit values (rather than to bytes first) keeps every bit offset in an error
/// equal to the offset the IAB specification counts from the start of the segment.
struct BitReader {
    /// One 6-bit value per character of the segment.
    private let sextets: [UInt8]
    /// The next bit to read, from the start of the segment.
    private(set) var offset = 0

    /// The number of bits the segment holds (six per character).
    var bitCount: Int { sextets.count * 6 }

    /// What ``decode(_:)`` accepts, for error messages.
    static let alphabet = "A-Z, a-z, 0-9, - or _, then at most two = completing a group of four"

    /// Decodes `text` as base64url, with or without `=` padding.
    ///
    /// - Returns: The reader, or the offset and character of the first character that is not base64url.
    static func decode(_ text: some Collection<UInt8>) -> Result<BitReader, InvalidCharacter> {
        var sextets: [UInt8] = []
        sextets.reserveCapacity(text.count)
        var padding = 0
        for (index, byte) in text.enumerated() {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = sextet(byte) else {
                return .failure(InvalidCharacter(characterOffset: index, byte: byte))
            }
            sextets.append(value)
        }
        // Padding, when present, completes the last group of four characters, and is never more than two.
        if padding > 0, padding > 2 || (sextets.count + padding) % 4 != 0 {
            return .failure(InvalidCharacter(characterOffset: sextets.count, byte: UInt8(ascii: "=")))
        }
        return .success(BitReader(sextets: sextets))
    }

    /// A character that base64url does not allow, or padding in the wrong place.
    struct InvalidCharacter: Error {
        var characterOffset: Int
        var byte: UInt8
    }

    private init(sextets: [UInt8]) {
        self.sextets = sextets
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// Whether `count` more bits are there to read.
    func has(_ count: Int) -> Bool { offset + count <= bitCount }

    /// Reads an unsigned integer of `count` bits (at most 63), or `nil` when the segment ends first.
    mutating func read(_ count: Int) -> Int? {
        guard has(count) else { return nil }
        var value = 0
        var remaining = count
        // A character at a time: up to six bits per step rather than one.
        while remaining > 0 {
            let available = 6 - offset % 6
            let take = Swift.min(available, remaining)
            let chunk = (Int(sextets[offset / 6]) >> (available - take)) & ((1 << take) - 1)
            value = value << take | chunk
            offset += take
            remaining -= take
        }
        return value
    }

    /// Reads one bit as a Boolean, or `nil` when the segment ends first.
    mutating func readBool() -> Bool? {
        read(1).map { $0 == 1 }
    }

    /// Reads `count` bits as a set of the 1-based positions that are set, or `nil` when the segment ends first.
    mutating func readBitField(_ count: Int) -> TCString.IDSet? {
        guard has(count) else { return nil }
        var set = TCString.IDSet(reservingCapacityFor: count)
        var position = 1
        var remaining = count
        while remaining > 0 {
            let take = Swift.min(6 - offset % 6, remaining)
            let chunk = read(take)!
            // The chunk's highest bit is `position`; visit only the bits that are set.
            var bits = chunk
            while bits != 0 {
                let bit = Int.bitWidth - 1 - bits.leadingZeroBitCount
                set.insert(position + take - 1 - bit)
                bits &= ~(1 << bit)
            }
            position += take
            remaining -= take
        }
        return set
    }

    /// Reads a Fibonacci-coded positive integer (GPP): bits weigh 1, 2, 3, 5, 8…, ended by two 1 bits in a row.
    mutating func readFibonacci() -> Int? {
        var weight = 1
        var nextWeight = 2
        var value = 0
        var lastBit = 0
        var length = 0
        while let bit = read(1) {
            if bit == 1 && lastBit == 1 { return value }
            // 60 bits already code numbers past a trillion; a longer code is garbage, not a section ID.
            length += 1
            guard length <= 60 else { return nil }
            if bit == 1 { value += weight }
            (weight, nextWeight) = (nextWeight, weight + nextWeight)
            lastBit = bit
        }
        return nil
    }
}
