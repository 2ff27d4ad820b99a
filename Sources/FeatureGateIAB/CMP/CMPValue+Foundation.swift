import FeatureGate
import Foundation

extension CMPValue {
    /// A value stored under a CMP key that is neither a string nor a whole number.
    public struct TypeError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was found: `a Boolean`, `1.5` (a number with a fraction), `a value of type Date`.
        public let found: String

        package init(found: String) {
            self.found = found
        }

        /// `found FOUND, expected a whole number or a string`.
        public var description: String { "found \(found), expected a whole number or a string" }
    }
}

extension CMPValue {
    /// Converts a value read from `UserDefaults`, a property list or JSON into a CMP value: the one conversion the
    /// device reader, `featuregate tcf apply` and the demo share, so they read the same keys the same way.
    ///
    /// A string is a string; a whole number (an integer, or a floating-point number with no fraction) is a
    /// number. A Boolean is not a number here, though Foundation stores both as `NSNumber`: the IAB keys hold
    /// `0`/`1` numbers or strings, and a CMP that writes `true` has written something else, which is reported, not
    /// guessed. A fractional number is never truncated.
    ///
    /// - Throws: ``CMPValue/TypeError`` saying what was found.
    public init(foundationValue value: Any) throws(CMPValue.TypeError) {
        switch StoredDefaultsValue(foundationObject: value) {
        case .string(let string): self = .string(string)
        case .integer(let integer): self = .number(integer)
        case .real(let real):
            guard let integer = Int(exactly: real) else { throw CMPValue.TypeError(found: "\(real)") }
            self = .number(integer)
        case .boolean: throw CMPValue.TypeError(found: "a Boolean")
        case .data, .other: throw CMPValue.TypeError(found: "a value of type \(type(of: value))")
        }
    }
}
