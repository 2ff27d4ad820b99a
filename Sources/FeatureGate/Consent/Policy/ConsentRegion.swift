import Foundation

/// Where the user is, as the app knows it: an ISO 3166-1 alpha-2 country (`US`) or an ISO 3166-2 subdivision
/// (`US-CA`).
///
/// The app says where the user is (from its server, or from a consent platform's `gdprApplies` or GPP's applicable
/// sections); FeatureGate never guesses it from the device's locale, which would let a locale loosen the rules.
/// Codes compare case-insensitively: they are kept in upper case.
public struct ConsentRegion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The code in upper case: `US` or `US-CA`.
    public let code: String

    /// Reads `code`, in any case: two ASCII letters, optionally followed by `-` and one to three ASCII letters or
    /// digits. Returns `nil` for anything else.
    public init?(_ code: String) {
        let upper = code.uppercased()
        let parts = upper.split(separator: "-", omittingEmptySubsequences: false)
        func isLetters(_ text: Substring) -> Bool { text.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A } }
        func isAlphanumeric(_ text: Substring) -> Bool {
            text.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }
        }
        guard parts.count <= 2, parts[0].utf8.count == 2, isLetters(parts[0]) else { return nil }
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), isAlphanumeric(parts[1]) else { return nil }
        }
        self.code = upper
    }

    /// The country part: `US` for `US-CA`.
    public var country: ConsentRegion {
        guard let dash = code.firstIndex(of: "-") else { return self }
        return ConsentRegion(String(code[..<dash])) ?? self
    }

    /// Whether this is a subdivision (`US-CA`) rather than a country.
    public var isSubdivision: Bool { code.contains("-") }

    /// The code.
    public var description: String { code }

    /// Orders regions by code.
    public static func < (lhs: ConsentRegion, rhs: ConsentRegion) -> Bool { lhs.code < rhs.code }
}
