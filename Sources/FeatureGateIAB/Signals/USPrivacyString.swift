/// A decoded IAB US Privacy string (CCPA), e.g. `1YNN`: version, notice, opt-out of sale, LSPA coverage.
///
/// Decode with ``init(_:)``; anything but four characters of version 1 and `Y`, `N` or `-` throws a
/// ``USPrivacyString/DecodingError``.
public struct USPrivacyString: Sendable, Hashable, CustomStringConvertible {
    /// One answer of the string.
    public enum Answer: String, Sendable, Hashable, CaseIterable {
        /// `Y`.
        case yes
        /// `N`.
        case no
        /// `-`: the question does not apply.
        case notApplicable
    }

    /// The string's version; always 1.
    public var version: Int
    /// Whether the user was given notice and the chance to opt out of sale.
    public var noticeGiven: Answer
    /// Whether the user opted out of the sale of personal information.
    public var optedOutOfSale: Answer
    /// Whether the publisher is a signatory of the IAB Limited Service Provider Agreement.
    public var coveredByLSPA: Answer

    /// Creates a value.
    public init(version: Int = 1, noticeGiven: Answer, optedOutOfSale: Answer, coveredByLSPA: Answer) {
        self.version = version
        self.noticeGiven = noticeGiven
        self.optedOutOfSale = optedOutOfSale
        self.coveredByLSPA = coveredByLSPA
    }

    /// Decodes a string such as `1YNN` (upper or lower case letters).
    ///
    /// - Throws: ``USPrivacyString/DecodingError`` naming the field and character offset of the first problem.
    public init(_ string: String) throws(USPrivacyString.DecodingError) {
        let characters = Array(string.uppercased().unicodeScalars)
        guard characters.count == 4 else {
            throw USPrivacyString.DecodingError(
                field: "length", characterOffset: min(characters.count, 4), found: "\(characters.count) characters",
                expected: "4 characters, e.g. 1YNN")
        }
        guard characters[0] == "1" else {
            throw USPrivacyString.DecodingError(
                field: "Version", characterOffset: 0, found: "\"\(characters[0])\"", expected: "1")
        }
        func answer(_ index: Int, _ field: String) throws(USPrivacyString.DecodingError) -> Answer {
            switch characters[index] {
            case "Y": return .yes
            case "N": return .no
            case "-": return .notApplicable
            default:
                throw USPrivacyString.DecodingError(
                    field: field, characterOffset: index, found: "\"\(characters[index])\"", expected: "Y, N or -")
            }
        }
        self.init(
            version: 1, noticeGiven: try answer(1, "Notice"), optedOutOfSale: try answer(2, "OptOutSale"),
            coveredByLSPA: try answer(3, "LSPACoveredTransaction"))
    }

    /// The string form, e.g. `1YNN`.
    public var description: String {
        func letter(_ answer: Answer) -> String {
            switch answer {
            case .yes: "Y"
            case .no: "N"
            case .notApplicable: "-"
            }
        }
        return "\(version)" + letter(noticeGiven) + letter(optedOutOfSale) + letter(coveredByLSPA)
    }
}

extension USPrivacyString {
    /// Why a US Privacy string could not be decoded.
    public struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The field, named as in the IAB specification (`Version`, `Notice`, `OptOutSale`, `LSPACoveredTransaction`).
        public var field: String
        /// The offset of the character at fault.
        public var characterOffset: Int
        /// What was found.
        public var found: String
        /// What the specification expects.
        public var expected: String

        /// One line naming the field, offset, what was found and what was expected.
        public var description: String {
            "US Privacy string \(field) at character \(characterOffset): found \(found), expected \(expected)"
        }
    }
}
