/// A ``BitReader`` over one GPP section that throws ``GPPString/DecodingError`` naming the section, field and bit offset.
struct GPPBitReader {
    var bits: BitReader
    let section: String
    var offset: Int { bits.offset }

    init(_ text: Substring, section: String) throws(GPPString.DecodingError) {
        guard !text.isEmpty else {
            throw GPPString.DecodingError(
                section: section, field: "base64url", bitOffset: 0, found: "nothing", expected: "a section")
        }
        switch BitReader.decode(text.utf8) {
        case .success(let bits): self.bits = bits
        case .failure(let failure):
            throw GPPString.DecodingError(
                section: section, field: "base64url", bitOffset: failure.characterOffset * 6,
                found: "byte 0x\(String(failure.byte, radix: 16)) at character \(failure.characterOffset)",
                expected: BitReader.alphabet)
        }
        self.section = section
    }

    func invalid(_ field: String, at offset: Int, found: String, expected: String) -> GPPString.DecodingError {
        GPPString.DecodingError(section: section, field: field, bitOffset: offset, found: found, expected: expected)
    }

    mutating func int(_ count: Int, _ field: String) throws(GPPString.DecodingError) -> Int {
        guard let value = bits.read(count) else {
            throw invalid(
                field, at: bits.offset, found: "\(bits.bitCount - bits.offset) bits left", expected: "\(count) bits")
        }
        return value
    }

    mutating func fibonacci(_ field: String) throws(GPPString.DecodingError) -> Int {
        let start = offset
        guard let value = bits.readFibonacci() else {
            throw invalid(field, at: start, found: "no terminated Fibonacci code", expected: "a code ending in 11")
        }
        return value
    }
}
