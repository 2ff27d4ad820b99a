/// A value of an event property: the few types an analytics payload needs.
public enum EventValue: Sendable, Hashable, CustomStringConvertible {
    /// Text.
    case string(String)
    /// A whole number.
    case int(Int)
    /// A number with a fraction.
    case double(Double)
    /// A flag.
    case bool(Bool)

    /// The value as it would appear in a payload.
    public var description: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        }
    }
}

extension EventValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point value.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
