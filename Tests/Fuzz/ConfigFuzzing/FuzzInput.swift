/// Fuzz bytes read as a sequence of choices: each call takes the next byte(s); past the end every choice is 0.
///
/// Zero always means "the plainest option, and stop": no more children, no corruption. So a short input gives a
/// small well-formed document, and libFuzzer's byte mutations become structural mutations of the document.
package struct FuzzInput {
    private let bytes: [UInt8]
    private var index = 0

    package init<Bytes: Collection<UInt8>>(_ bytes: Bytes) { self.bytes = Array(bytes) }

    /// Whether every byte has been used.
    package var isExhausted: Bool { index >= bytes.count }

    /// The next byte, or 0 past the end.
    package mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// A number in `0..<bound` (bound ≥ 1), from one byte, or two when `bound` is above 256.
    package mutating func below(_ bound: Int) -> Int {
        let raw = bound > 256 ? Int(byte()) << 8 | Int(byte()) : Int(byte())
        return raw % bound
    }

    /// True with probability about `percent` / 100; false past the end.
    package mutating func chance(_ percent: Int) -> Bool {
        guard !isExhausted else { return false }
        return Int(byte()) * 100 < percent * 256
    }

    /// One of `elements` (the first past the end).
    package mutating func pick<T>(_ elements: [T]) -> T { elements[below(elements.count)] }

    /// The next eight bytes, big-endian.
    package mutating func uint64() -> UInt64 { (0..<8).reduce(0) { value, _ in value << 8 | UInt64(byte()) } }

    /// The next `count` bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}

/// Values that parsers and formatters get wrong: every class of IEEE double, and integers at the edges.
package enum InterestingNumbers {
    /// Bit patterns of doubles: NaNs (quiet, negative, signalling, with payloads), infinities, zeros, denormals,
    /// the largest finite values, the edges of the years a date can show, and ordinary values.
    package static let doubleBits: [UInt64] = [
        0x7FF8_0000_0000_0000, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001, 0x7FF4_0000_0000_0000,
        0xFFFF_FFFF_FFFF_FFFF, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x0000_0000_0000_0000,
        0x8000_0000_0000_0000, 0x0000_0000_0000_0001, 0x8000_0000_0000_0001, 0x000F_FFFF_FFFF_FFFF,
        0x0010_0000_0000_0000, 0x7FEF_FFFF_FFFF_FFFF, 0xFFEF_FFFF_FFFF_FFFF, 0x3FF0_0000_0000_0000,
        0x4010_0000_0000_0000, 0x4350_0000_0000_0000, 0x43E0_0000_0000_0000, 0xC3E0_0000_0000_0000,
        (-63_113_904_000.0).bitPattern, (-63_113_904_000.5).bitPattern, (252_423_993_599.9).bitPattern,
        (252_423_993_600.0).bitPattern, (-978_307_200.0).bitPattern, (1e17).bitPattern, (-1e300).bitPattern,
    ]

    /// Bit patterns of 4-byte floats of the same classes.
    package static let floatBits: [UInt32] = [
        0x7FC0_0000, 0xFFC0_0000, 0x7F80_0001, 0x7FA0_0000, 0x7F80_0000, 0xFF80_0000, 0x0000_0000, 0x8000_0000,
        0x0000_0001, 0x007F_FFFF, 0x7F7F_FFFF, 0x4080_0000,
    ]

    /// Integers at the edges of every width, and bitmasks of the built-in flags.
    package static let integers: [UInt64] = [
        0, 1, 4, 0x10, 0x175, 0x1_0175, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0x8000_0000,
        0xFFFF_FFFF, 0x1_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0xFFFF_FFFF_FFFF_FFFF,
    ]

    /// Strings a config uses, and near misses.
    package static let strings: [String] = [
        "enabledFeatures", "resetEnabledFeatures", "push", "analytics", "in_app_automation", "message_center",
        "tags_and_attributes", "contacts", "feature_flags", "crash_reports", "all", "none", "chat", "location",
        "push, analytics", "PUSH", " push ", "enabledfeatures", "enabled_features", "", "x", "pushh",
        "analyticsEnabled",
        "isAnalyticsEnabled",
    ]
}
