/// An Ivy version constraint, as Airship's servers write `sdk_versions` and `version_matches`.
///
/// Whitespace is removed everywhere first, then a `-qualifier` suffix is dropped from the constraint (and from each
/// bound) and from the version being matched, so `1.0-beta` matches `1.0-SNAPSHOT`. The forms:
/// - `P+`: the version's text starts with `P` (`1.0+` matches `1.01`; `1.0.+` does not match `1.0`). `P` is digits
///   and dots and may end with a dot; a bare `+` matches every version.
/// - `N(.N)*`: exactly that text (`1.0` does not match `1.0.0`).
/// - `[a,b]`, `[a,b[`, `]a,b]`, `]a,b[`, `[a,)`, `]a,)`, `(,b]`, `(,b[`: a range, `[`/`]` facing the range
///   inclusive and facing away exclusive, compared on the first three numeric components (missing ones are 0).
///   A version that is not `N(.N)*` is in no range.
///
/// Anything else is malformed, and ``init(_:)`` throws.
package struct IvyVersionConstraint: Sendable, Hashable, CustomStringConvertible {
    /// The constraint as written.
    package let text: String
    private let form: Form

    private enum Form: Hashable {
        case prefix(String)
        case exact(String)
        case range(lower: Bound?, upper: Bound?)
    }

    private struct Bound: Hashable {
        var components: [String]
        var isInclusive: Bool
    }

    /// Parses `text`.
    ///
    /// - Throws: `IvyConstraintError` when `text` is not one of the forms above.
    package init(_ text: String) throws(IvyConstraintError) {
        self.text = text
        let compact = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard let first = compact.first, let last = compact.last else {
            throw IvyConstraintError(constraint: text, problem: "it is empty")
        }
        if last == "+" {
            let stem = Self.droppingQualifier(String(compact.dropLast()))
            guard stem.isEmpty || Self.isNumericPrefix(stem) else {
                throw IvyConstraintError(constraint: text, problem: "before '+' must come digits and dots")
            }
            form = .prefix(stem)
        } else if "[](".contains(first) || "[])".contains(last) {
            form = try Self.range(compact, original: text)
        } else {
            guard let version = Self.numericVersion(compact[...]) else {
                throw IvyConstraintError(constraint: text, problem: "it is neither N(.N)*, a prefix P+ nor a range")
            }
            form = .exact(version)
        }
    }

    /// Whether `version` satisfies the constraint. Never throws: a version the constraint cannot read does not match.
    package func matches(_ version: String) -> Bool {
        let normalized = Self.droppingQualifier(String(version.unicodeScalars.filter { !$0.properties.isWhitespace }))
        switch form {
        case .prefix(let stem): return normalized.hasPrefix(stem)
        case .exact(let exact): return normalized == exact
        case .range(let lower, let upper):
            guard Self.isNumericVersion(normalized) else { return false }
            let components = Self.components(normalized)
            if let lower {
                let order = Self.compare(components, lower.components)
                if order < 0 || (order == 0 && !lower.isInclusive) { return false }
            }
            if let upper {
                let order = Self.compare(components, upper.components)
                if order > 0 || (order == 0 && !upper.isInclusive) { return false }
            }
            return true
        }
    }

    /// The constraint as written.
    package var description: String { text }

    // MARK: - Parsing

    private static func range(_ compact: String, original: String) throws(IvyConstraintError) -> Form {
        guard compact.count >= 3, let first = compact.first, let last = compact.last,
            "[](".contains(first), "[])".contains(last)
        else {
            throw IvyConstraintError(
                constraint: original, problem: "a range must open with [, ] or ( and close with ], [ or )")
        }
        let inner = compact.dropFirst().dropLast()
        let parts = inner.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw IvyConstraintError(constraint: original, problem: "a range has exactly one comma")
        }
        func bound(_ part: Substring, open: Bool, inclusive: Bool) throws(IvyConstraintError) -> Bound? {
            if open {
                guard part.isEmpty else {
                    throw IvyConstraintError(constraint: original, problem: "a parenthesis takes no version")
                }
                return nil
            }
            guard let version = numericVersion(part) else {
                throw IvyConstraintError(constraint: original, problem: "a bracketed bound needs a version N(.N)*")
            }
            return Bound(components: components(version), isInclusive: inclusive)
        }
        let lower = try bound(parts[0], open: first == "(", inclusive: first == "[")
        let upper = try bound(parts[1], open: last == ")", inclusive: last == "]")
        guard lower != nil || upper != nil else {
            throw IvyConstraintError(constraint: original, problem: "(,) bounds nothing")
        }
        return .range(lower: lower, upper: upper)
    }

    /// Drops everything from the first `-`.
    static func droppingQualifier(_ text: String) -> String {
        guard let dash = text.firstIndex(of: "-") else { return text }
        return String(text[..<dash])
    }

    /// The version of `text` when it is `N(.N)*` with an optional non-empty `-qualifier`; `nil` otherwise.
    package static func numericVersion(_ text: Substring) -> String? {
        var version = text
        if let dash = text.firstIndex(of: "-") {
            guard text.index(after: dash) < text.endIndex else { return nil }
            version = text[..<dash]
        }
        return isNumericVersion(String(version)) ? String(version) : nil
    }

    /// `N(.N)*`.
    static func isNumericVersion(_ text: String) -> Bool {
        !text.isEmpty && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isDigits)
    }

    /// `N(.N)*` optionally followed by a dot.
    private static func isNumericPrefix(_ text: String) -> Bool {
        isNumericVersion(text.hasSuffix(".") ? String(text.dropLast()) : text)
    }

    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The first three numeric components, without leading zeros, missing ones as `0`.
    private static func components(_ version: String) -> [String] {
        var parts = version.split(separator: ".").prefix(3).map { part -> String in
            let trimmed = part.drop { $0 == "0" }
            return trimmed.isEmpty ? "0" : String(trimmed)
        }
        while parts.count < 3 { parts.append("0") }
        return parts
    }

    /// Compares numbers of any length written as digits without leading zeros: shorter is smaller.
    private static func compare(_ left: [String], _ right: [String]) -> Int {
        for (a, b) in zip(left, right) where a != b {
            if a.count != b.count { return a.count < b.count ? -1 : 1 }
            return a < b ? -1 : 1
        }
        return 0
    }
}

/// A version constraint that is not one of the Ivy forms `IvyVersionConstraint` reads.
package struct IvyConstraintError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The constraint as written.
    package let constraint: String
    /// What is wrong with it.
    package let problem: String

    /// `"1.a": it is neither N(.N)*, a prefix P+ nor a range`.
    package var description: String { "\"\(constraint)\": \(problem)" }
}
