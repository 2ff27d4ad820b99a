import FeatureGate
import Foundation

/// A parser for binary property lists (`bplist00`) that checks every offset and enforces the reader's limits.
///
/// Every offset, length and object reference is checked against the file before it is followed, reference cycles
/// are refused, and shared objects count once per use toward ``ConfigLimits/maximumValueCount``, so a small file
/// cannot expand into a huge tree. Foundation's parser was not used because it recurses once per level of nesting
/// without a limit, which a crafted file of a few hundred kilobytes turns into a stack overflow.
package struct BinaryPlistParser {
    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let offsetTableStart: Int
    private var budget: ParseBudget
    private var objectsOnPath: Set<Int> = []

    private static let trailerSize = 32
    private static let headerSize = 8

    /// Parses a whole binary plist.
    package static func parse(_ bytes: [UInt8], limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        guard bytes.starts(with: Array("bplist00".utf8)) else {
            let header = String(decoding: bytes.prefix(8).map { $0 < 0x80 && $0 >= 0x20 ? $0 : 0x3F }, as: UTF8.self)
            throw ParseFailure(
                .syntaxError, "unsupported binary plist version \(quoted(header))",
                found: quoted(header), expected: "bplist00")
        }
        guard bytes.count >= headerSize + 2 + trailerSize else {
            throw ParseFailure(
                .syntaxError, "the binary plist is truncated: \(bytes.count) bytes",
                found: "\(bytes.count) bytes", expected: "at least \(headerSize + 2 + trailerSize) bytes")
        }
        let trailer = bytes.count - trailerSize
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        let objectCount = readUInt(bytes, at: trailer + 8, size: 8)
        let topObject = readUInt(bytes, at: trailer + 16, size: 8)
        let tableStart = readUInt(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw corrupt("the trailer gives offset size \(offsetSize) and reference size \(referenceSize)")
        }
        // Every object takes at least one byte, so the count is bounded by the file size; checking it first keeps
        // the arithmetic below far from overflow.
        guard objectCount >= 1, objectCount <= UInt64(bytes.count) else {
            throw corrupt("the trailer claims \(objectCount) objects in a file of \(bytes.count) bytes")
        }
        guard topObject < objectCount else {
            throw corrupt("the top object \(topObject) is not one of the \(objectCount) objects")
        }
        guard tableStart >= UInt64(headerSize + 1), tableStart <= UInt64(trailer),
            tableStart + objectCount * UInt64(offsetSize) <= UInt64(trailer)
        else {
            throw corrupt("the offset table at byte \(tableStart) does not fit before the trailer")
        }
        var parser = BinaryPlistParser(
            bytes: bytes, offsetSize: offsetSize, referenceSize: referenceSize, objectCount: Int(objectCount),
            offsetTableStart: Int(tableStart), budget: ParseBudget(limits))
        return try parser.parseObject(Int(topObject), depth: 0)
    }

    // MARK: - Objects

    private mutating func parseObject(_ reference: Int, depth: Int) throws(ParseFailure) -> ConfigNode {
        guard !objectsOnPath.contains(reference) else {
            throw Self.corrupt("object \(reference) contains itself")
        }
        try budget.countValue(line: nil)
        let offset = try offset(of: reference)
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch low {
            case 0x0: return ConfigNode(.null)
            case 0x8: return ConfigNode(.boolean(false))
            case 0x9: return ConfigNode(.boolean(true))
            default: throw Self.corrupt("object \(reference) has the unknown type 0x\(hex2(marker))")
            }
        case 0x1:
            guard low <= 4 else { throw Self.corrupt("object \(reference) is an integer of 2^\(low) bytes") }
            return ConfigNode(.integer(try readInteger(at: offset + 1, size: 1 << low)))
        case 0x2:
            guard low == 2 || low == 3 else { throw Self.corrupt("object \(reference) is a real of 2^\(low) bytes") }
            try checkRange(offset + 1, count: 1 << low, of: reference)
            let bits = Self.readUInt(bytes, at: offset + 1, size: 1 << low)
            let value = low == 2 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits)
            return ConfigNode(.real("\(value)"))
        case 0x3:
            guard low == 3 else { throw Self.corrupt("object \(reference) is a date of the wrong size") }
            try checkRange(offset + 1, count: 8, of: reference)
            let seconds = Double(bitPattern: Self.readUInt(bytes, at: offset + 1, size: 8))
            return ConfigNode(
                .date(text: PlistDateText.text(secondsSinceReferenceDate: seconds), seconds: seconds))
        case 0x4:
            let (count, start) = try readLength(low, at: offset, of: reference)
            try checkRange(start, count: count, of: reference)
            return ConfigNode(.data(Array(bytes[start..<start + count])))
        case 0x5:
            let (count, start) = try readLength(low, at: offset, of: reference)
            try checkRange(start, count: count, of: reference)
            let text = bytes[start..<start + count]
            guard text.allSatisfy({ $0 < 0x80 }) else {
                throw Self.corrupt("the ASCII string in object \(reference) holds a byte above 0x7F")
            }
            return ConfigNode(.string(String(decoding: text, as: UTF8.self)))
        case 0x6:
            let (count, start) = try readLength(low, at: offset, of: reference)
            try checkRange(start, count: count * 2, of: reference)
            let units = (0..<count).map { UInt16(Self.readUInt(bytes, at: start + 2 * $0, size: 2)) }
            guard let text = validatedString(units, as: UTF16.self) else {
                throw Self.corrupt("the UTF-16 string in object \(reference) has an unpaired surrogate")
            }
            return ConfigNode(.string(text))
        case 0x8:
            try checkRange(offset + 1, count: low + 1, of: reference)
            return ConfigNode(.other("a UID"))
        case 0xA, 0xC:
            try budget.checkDepth(depth + 1, line: nil)
            let (count, start) = try readLength(low, at: offset, of: reference)
            try checkRange(start, count: count * referenceSize, of: reference)
            objectsOnPath.insert(reference)
            defer { objectsOnPath.remove(reference) }
            var elements: [ConfigNode] = []
            for position in 0..<count {
                let child = try readReference(at: start + position * referenceSize, in: reference)
                elements.append(try parseObject(child, depth: depth + 1))
            }
            return ConfigNode(.array(elements))
        case 0xD:
            try budget.checkDepth(depth + 1, line: nil)
            let (count, start) = try readLength(low, at: offset, of: reference)
            try checkRange(start, count: 2 * count * referenceSize, of: reference)
            objectsOnPath.insert(reference)
            defer { objectsOnPath.remove(reference) }
            var entries: [ConfigNode.Entry] = []
            for position in 0..<count {
                let keyReference = try readReference(at: start + position * referenceSize, in: reference)
                let valueReference = try readReference(
                    at: start + (count + position) * referenceSize, in: reference)
                let keyNode = try parseObject(keyReference, depth: depth + 1)
                guard case .string(let key) = keyNode.value else {
                    throw Self.corrupt("a key of the dictionary in object \(reference) is \(keyNode.summary)")
                }
                entries.append(
                    ConfigNode.Entry(key: key, line: nil, value: try parseObject(valueReference, depth: depth + 1)))
            }
            return ConfigNode(.dictionary(entries))
        default:
            throw Self.corrupt("object \(reference) has the unknown type 0x\(hex2(marker))")
        }
    }

    // MARK: - Reading

    private func offset(of reference: Int) throws(ParseFailure) -> Int {
        let offset = Self.readUInt(bytes, at: offsetTableStart + reference * offsetSize, size: offsetSize)
        guard offset >= UInt64(Self.headerSize), offset < UInt64(offsetTableStart) else {
            throw Self.corrupt("object \(reference) starts at byte \(offset), outside the object area")
        }
        return Int(offset)
    }

    private func readReference(at position: Int, in container: Int) throws(ParseFailure) -> Int {
        let reference = Self.readUInt(bytes, at: position, size: referenceSize)
        guard reference < UInt64(objectCount) else {
            throw Self.corrupt("object \(container) refers to object \(reference) of \(objectCount)")
        }
        return Int(reference)
    }

    /// The count of a data, string or container object: in the marker's low nibble, or in an integer after it.
    private func readLength(_ low: Int, at offset: Int, of reference: Int) throws(ParseFailure) -> (Int, Int) {
        guard low == 0xF else { return (low, offset + 1) }
        try checkRange(offset + 1, count: 1, of: reference)
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw Self.corrupt("object \(reference) has a malformed length")
        }
        let size = 1 << Int(marker & 0x0F)
        try checkRange(offset + 2, count: size, of: reference)
        let count = Self.readUInt(bytes, at: offset + 2, size: size)
        guard count <= UInt64(bytes.count) else {
            throw Self.corrupt("object \(reference) claims \(count) elements in a file of \(bytes.count) bytes")
        }
        return (Int(count), offset + 2 + size)
    }

    private func readInteger(at start: Int, size: Int) throws(ParseFailure) -> ConfigInteger {
        try checkRange(start, count: size, of: nil)
        switch size {
        case 1, 2, 4: return ConfigInteger(Self.readUInt(bytes, at: start, size: size))
        case 8: return ConfigInteger(Int64(bitPattern: Self.readUInt(bytes, at: start, size: 8)))
        default:
            let high = Self.readUInt(bytes, at: start, size: 8)
            let low = Self.readUInt(bytes, at: start + 8, size: 8)
            return Self.integer128(high: high, low: low)
        }
    }

    /// The 128-bit two's-complement integer `high:low`, in 64-bit arithmetic (`Int128` needs iOS 18 / macOS 15).
    static func integer128(high: UInt64, low: UInt64) -> ConfigInteger {
        let isNegative = high >> 63 == 1
        var (high, low) = (high, low)
        if isNegative {
            low = ~low &+ 1
            high = ~high &+ (low == 0 ? 1 : 0)
        }
        let magnitude = high == 0 ? low : nil
        // Decimal digits 19 at a time: divide the 128-bit magnitude by 10^19, high word first.
        let base: UInt64 = 10_000_000_000_000_000_000
        var chunks: [UInt64] = []
        while high != 0 {
            let (quotientHigh, remainderHigh) = high.quotientAndRemainder(dividingBy: base)
            let (quotientLow, remainder) = base.dividingFullWidth((remainderHigh, low))
            (high, low) = (quotientHigh, quotientLow)
            chunks.append(remainder)
        }
        var text = (isNegative ? "-" : "") + String(low)
        for chunk in chunks.reversed() {
            let digits = String(chunk)
            text += String(repeating: "0", count: 19 - digits.count) + digits
        }
        return ConfigInteger(text: text, isNegative: isNegative, magnitude: magnitude)
    }

    private func checkRange(_ start: Int, count: Int, of reference: Int?) throws(ParseFailure) {
        guard start >= Self.headerSize, count >= 0, start <= offsetTableStart, count <= offsetTableStart - start
        else {
            let object = reference.map { "object \($0)" } ?? "an object"
            throw Self.corrupt("\(object) runs past the end of the object area")
        }
    }

    private static func readUInt(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for offset in 0..<size { value = value << 8 | UInt64(bytes[start + offset]) }
        return value
    }

    private static func corrupt(_ message: String) -> ParseFailure {
        ParseFailure(.syntaxError, "the binary plist is corrupt: \(message)", expected: "a well-formed bplist00 file")
    }
}

private func hex2(_ byte: UInt8) -> String {
    (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
}
