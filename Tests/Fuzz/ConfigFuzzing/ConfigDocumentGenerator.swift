/// The structure-aware fuzz target's input: fuzz bytes in, one config document out.
///
/// The first byte picks the format (binary plist half the time, since random bytes almost never form one; XML,
/// JSON and old-style plists a sixth each); the rest drives ``BinaryPlistGenerator`` or ``TextConfigGenerator``. The same bytes
/// always give the same document, so a crashing recipe turns into a config file for the corpus with
/// `config-structure-fuzzer --write-document RECIPE FILE`.
package enum ConfigDocumentGenerator {
    package static func document(from bytes: some Collection<UInt8>) -> [UInt8] {
        var input = FuzzInput(bytes)
        switch input.byte() % 6 {
        case 0, 1, 2:
            // About half the files are well-formed, so the reader's deeper paths get their share.
            return BinaryPlistGenerator.generate(&input, allowCorruption: input.chance(50))
        case 3: return TextConfigGenerator.generate(&input, syntax: .xml)
        case 4: return TextConfigGenerator.generate(&input, syntax: .json)
        default: return TextConfigGenerator.generate(&input, syntax: .openStep)
        }
    }
}
