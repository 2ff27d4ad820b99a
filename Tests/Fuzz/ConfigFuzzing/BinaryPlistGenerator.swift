/// Turns fuzz bytes into a binary plist: a well-formed object table of random typed objects, then (when the bytes
/// ask for it) a corrupted one.
///
/// Objects: null, booleans, integers of 1 to 16 bytes, 4- and 8-byte reals and dates from
/// ``InterestingNumbers`` (NaN, infinite, denormal, huge), data, ASCII and UTF-16 strings (unpaired surrogates
/// included), UIDs, arrays, sets and dictionaries, and unknown markers. Containers hold new objects, shared
/// references to earlier ones, references to an ancestor (a cycle), references past the table, and chains nested
/// past the depth limit. Corruption: lying lengths, offset and reference sizes that are too small or out of range,
/// offset-table entries pointing anywhere, a trailer with a wrong count, top object or table start, a bad header,
/// truncation.
package struct BinaryPlistGenerator {
    private enum Object {
        case scalar([UInt8])
        /// Marker type (0xA array, 0xC set, 0xD dictionary); a dictionary's references are its keys then values.
        case container(type: UInt8, references: [Int], lengthLie: Int)
    }

    private var input: FuzzInput
    private let allowCorruption: Bool
    private var objects: [Object] = []
    private var ancestors: [Int] = []
    private static let maximumObjects = 400

    /// Builds one binary plist from `input`; with `allowCorruption` false, the result is well-formed (it may still
    /// hold cycles, references past the table or nesting past the reader's limits only when corruption is allowed).
    package static func generate(_ input: inout FuzzInput, allowCorruption: Bool = true) -> [UInt8] {
        var generator = BinaryPlistGenerator(input: input, allowCorruption: allowCorruption)
        let bytes = generator.document()
        input = generator.input
        return bytes
    }

    private init(input: FuzzInput, allowCorruption: Bool) {
        self.input = input
        self.allowCorruption = allowCorruption
    }

    private mutating func document() -> [UInt8] {
        // The top object is usually a dictionary with enabledFeatures, so the validator runs too.
        if input.chance(85) {
            _ = topDictionary()
        } else {
            _ = object(depth: 0)
        }
        return serialize()
    }

    // MARK: - Objects

    private mutating func append(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    private mutating func topDictionary() -> Int {
        let index = append(.scalar([]))
        ancestors.append(index)
        defer { ancestors.removeLast() }
        var keys = [append(.scalar(ascii("enabledFeatures")))]
        var values = [object(depth: 1)]
        while input.chance(40), objects.count < Self.maximumObjects {
            keys.append(
                allowCorruption && input.chance(10)
                    ? child(1) : append(.scalar(ascii(input.pick(InterestingNumbers.strings)))))
            values.append(child(1))
        }
        if input.chance(50) { (keys, values) = (keys.reversed(), values.reversed()) }
        objects[index] = .container(type: 0xD, references: keys + values, lengthLie: lengthLie())
        return index
    }

    /// A reference for a container's element: usually a new object, sometimes an existing one.
    private mutating func child(_ depth: Int) -> Int {
        guard objects.count < Self.maximumObjects else { return sharedReference() }
        switch input.below(32) {
        case 0...23: return object(depth: depth)
        case 24...27: return sharedReference()
        case 28 where allowCorruption && !ancestors.isEmpty: return input.pick(ancestors)  // a cycle
        case 29 where allowCorruption: return Self.maximumObjects + input.below(1_000)  // past the table
        default: return object(depth: depth)
        }
    }

    /// An object already in the table, shared; an ancestor (a cycle) only when corruption is allowed.
    private mutating func sharedReference() -> Int {
        let reference = input.below(objects.count)
        guard allowCorruption || !ancestors.contains(reference) else { return append(.scalar([0x09])) }
        return reference
    }

    private mutating func object(depth: Int) -> Int {
        let kind = input.below(17)
        switch kind {
        case 0: return append(.scalar([input.pick(allowCorruption ? [0x00, 0x08, 0x09, 0x0F] : [0x00, 0x08, 0x09])]))
        case 1, 2: return append(.scalar(integer()))
        case 3: return append(.scalar(real()))
        case 4: return append(.scalar(date()))
        case 5:
            let count = input.below(20)
            return append(.scalar(length(0x4, count) + input.bytes(count)))
        case 6, 7: return append(.scalar(ascii(string())))
        case 8: return append(.scalar(utf16()))
        case 9:
            let size = input.below(allowCorruption ? 16 : 4)
            return append(.scalar([0x80 | UInt8(size)] + input.bytes(size + 1)))
        case 10 where allowCorruption:
            return append(.scalar([input.pick([0x70, 0x90, 0xB0, 0xE0, 0xF0, 0x01, 0x24, 0x21, 0x32, 0x15])]))
        case 11 where allowCorruption:
            // A chain of arrays deep enough to pass the depth limit (64 by default, 256 at most).
            let chainDepth = input.below(300) + 1
            let first = objects.count
            for level in 0..<chainDepth {
                _ = append(
                    .container(type: 0xA, references: level + 1 < chainDepth ? [first + level + 1] : [], lengthLie: 0))
            }
            return first
        default:
            guard depth < 12, objects.count < Self.maximumObjects else { return append(.scalar(integer())) }
            let type: UInt8 = kind % 3 == 0 ? 0xD : (kind % 3 == 1 ? 0xA : 0xC)
            let index = append(.scalar([]))
            ancestors.append(index)
            defer { ancestors.removeLast() }
            let count = input.below(8)
            var references: [Int] = []
            if type == 0xD {
                // Keys are strings, bar corruption.
                for _ in 0..<count {
                    references.append(
                        allowCorruption && input.chance(10) ? child(depth + 1) : append(.scalar(ascii(string()))))
                }
            }
            for _ in 0..<count { references.append(child(depth + 1)) }
            objects[index] = .container(type: type, references: references, lengthLie: lengthLie())
            return index
        }
    }

    private mutating func lengthLie() -> Int {
        allowCorruption && input.chance(5) ? input.pick([-1, 1, 2, 1_000, Int(Int32.max)]) : 0
    }

    private mutating func integer() -> [UInt8] {
        let sizeLog = allowCorruption && input.chance(3) ? 5 : input.below(5)
        let size = 1 << sizeLog
        let value = input.chance(70) ? input.pick(InterestingNumbers.integers) : input.uint64()
        var bytes = (0..<min(size, 8)).reversed().map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) }
        if size == 16 {
            let high: [UInt8] = input.chance(50) ? Array(repeating: 0, count: 8) : input.bytes(8)
            bytes = high + bytes
        } else if size > 16 {
            bytes += input.bytes(input.below(size))
        }
        return [0x10 | UInt8(sizeLog)] + bytes
    }

    private mutating func double() -> UInt64 {
        input.chance(80) ? input.pick(InterestingNumbers.doubleBits) : input.uint64()
    }

    private mutating func real() -> [UInt8] {
        if input.chance(30) {
            let bits =
                input.chance(80) ? input.pick(InterestingNumbers.floatBits) : UInt32(truncatingIfNeeded: input.uint64())
            return [0x22] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: bits >> UInt32(8 * $0)) }
        }
        return [0x23] + bigEndian(double())
    }

    private mutating func date() -> [UInt8] {
        // A date of the wrong size, or cut off at the end of the object area, now and then.
        let marker: UInt8 = allowCorruption && input.chance(5) ? input.pick([0x30, 0x32, 0x34]) : 0x33
        return [marker] + bigEndian(double())
    }

    private mutating func string() -> String {
        if input.chance(70) { return input.pick(InterestingNumbers.strings) }
        return String(decoding: input.bytes(input.below(24)).map { $0 & 0x7F }, as: UTF8.self)
    }

    private mutating func ascii(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if allowCorruption && input.chance(3) { bytes.append(0x80 | input.byte()) }
        return length(0x5, bytes.count) + bytes
    }

    private mutating func utf16() -> [UInt8] {
        var units: [UInt16] = Array(input.pick(InterestingNumbers.strings).utf16)
        if input.chance(30) { units.append(contentsOf: [0xD83D, 0xDE00]) }
        if allowCorruption && input.chance(10) { units.insert(input.pick([0xD800, 0xDBFF, 0xDC00, 0xDFFF]), at: 0) }
        return length(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// A marker with `count` in its low nibble, or 0xF and an integer after it (always for 15 and up, sometimes
    /// for less); with corruption, the integer's size may be wrong.
    private mutating func length(_ type: UInt8, _ count: Int) -> [UInt8] {
        if count < 15 && !input.chance(10) { return [type << 4 | UInt8(count)] }
        let sizeLog = allowCorruption && input.chance(5) ? input.below(6) : (count < 256 ? 0 : 1)
        let size = 1 << sizeLog
        let bytes = (0..<size).reversed().map { UInt8(truncatingIfNeeded: count >> (8 * min($0, 7))) }
        return [type << 4 | 0xF, 0x10 | UInt8(sizeLog)] + bytes
    }

    // MARK: - File

    private mutating func serialize() -> [UInt8] {
        let count = objects.count
        let neededReferenceSize = count < 256 ? 1 : 2
        let referenceSize = allowCorruption && input.chance(5) ? input.below(10) : neededReferenceSize
        var header = Array("bplist00".utf8)
        if allowCorruption && input.chance(2) { header[7] = input.pick([0x31, 0x3F, 0x00]) }
        var bytes = header
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            switch object {
            case .scalar(let encoded): bytes += encoded
            case .container(let type, let references, let lie):
                let elements = type == 0xD ? references.count / 2 : references.count
                bytes += length(type, max(0, elements + lie))
                for reference in references { bytes += sized(reference, referenceSize) }
            }
        }
        var tableStart = bytes.count
        let neededOffsetSize = tableStart < 256 ? 1 : tableStart < 65_536 ? 2 : 4
        let offsetSize = allowCorruption && input.chance(5) ? input.below(10) : neededOffsetSize
        if allowCorruption {
            for _ in 0..<(input.chance(10) ? input.below(4) + 1 : 0) where !offsets.isEmpty {
                let entry = input.below(offsets.count)
                offsets[entry] = input.pick([0, 7, 8, offsets[entry] + 1, tableStart, tableStart - 1, bytes.count * 4])
            }
        }
        for offset in offsets { bytes += sized(offset, offsetSize) }
        var objectCount = count
        var topObject = 0
        if allowCorruption && input.chance(10) {
            switch input.below(4) {
            case 0: objectCount = input.pick([0, count - 1, count + 1, Int(Int32.max), -1])
            case 1: topObject = input.pick([count, count - 1, -1, Int(Int32.max)])
            case 2: tableStart = input.pick([0, 8, tableStart + 1, tableStart - 1, bytes.count, -1])
            default: break
            }
        }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: offsetSize), UInt8(truncatingIfNeeded: referenceSize)]
        for value in [objectCount, topObject, tableStart] { bytes += sized(value, 8) }
        if allowCorruption && input.chance(3) { bytes.removeLast(min(bytes.count, input.below(48))) }
        return bytes
    }

    /// `value` big-endian in `size` bytes (high bytes dropped; negative values in two's complement).
    private func sized(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: $0 >= 8 ? 0 : value >> (8 * $0)) }
    }

    private func bigEndian(_ bits: UInt64) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> UInt64(8 * $0)) }
    }
}
