/// `String(validating:as:)` for every platform the package supports: that initializer is Swift 6's standard library,
/// which Apple platforms ship from iOS 18 / macOS 15, above the package's floor.
///
/// Returns the text `units` encode, or `nil` when they are not valid in `encoding` (an ill-formed UTF-8 sequence, an
/// overlong form, an unpaired UTF-16 surrogate): the standard library's own decoders judge, as the initializer does.
package func validatedString<Units: Collection, Encoding: Unicode.Encoding & UnicodeCodec>(
    _ units: Units, as encoding: Encoding.Type
) -> String? where Units.Element == Encoding.CodeUnit {
    var decoder = Encoding()
    var iterator = units.makeIterator()
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: return String(decoding: units, as: encoding)
        case .error: return nil
        }
    }
}

/// Whether `units` are valid UTF-8, without building the string.
package func isValidUTF8<Units: Collection>(_ units: Units) -> Bool where Units.Element == UInt8 {
    var decoder = UTF8()
    var iterator = units.makeIterator()
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}
