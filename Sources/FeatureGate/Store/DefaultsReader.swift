import Foundation

/// A value stored in `UserDefaults` (or any preference store), as the readers of this package see it.
///
/// Foundation keeps Booleans and numbers alike as `NSNumber`; a reader tells them apart, so that code expecting an
/// integer can report a Boolean as the wrong type instead of reading it as `0` or `1`.
package enum StoredDefaultsValue: Sendable, Hashable, CustomStringConvertible {
    /// A whole number.
    case integer(Int)
    /// A Boolean.
    case boolean(Bool)
    /// A floating-point number (also one too large for `Int`).
    case real(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case data(Data)
    /// Anything else (a date, an array, a dictionary), named by its type.
    case other(typeName: String)

    /// What was found, for a diagnostic: `the integer 17`, `a Boolean (true)`, `a string ("all")`...
    package var description: String {
        switch self {
        case .integer(let value): "the integer \(value)"
        case .boolean(let value): "a Boolean (\(value))"
        case .real(let value): "the number \(value)"
        case .string(let value): "a string (\"\(value)\")"
        case .data(let value): "\(value.count) bytes of data"
        case .other(let typeName): "a value of type \(typeName)"
        }
    }
}

/// Why a preference store could not say what a key holds.
public struct DefaultsReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key that was read.
    public let key: String
    /// Where it was read (a suite name, `standard`).
    public let store: String

    /// Creates the error: the store's data is unavailable (on iOS, the device is locked and the data protected).
    public init(key: String, store: String) {
        self.key = key
        self.store = store
    }

    /// `STORE: KEY cannot be read now: protected data unavailable (device locked)`.
    public var description: String {
        "\(store): \(key) cannot be read now: protected data unavailable (device locked)"
    }
}

/// Reads keys of a preference store: `UserDefaults` on Apple platforms, a dictionary in tests and on Linux.
///
/// The seam through which code that runs on `UserDefaults` is tested everywhere. It tells apart a key that is
/// absent (`nil`), one that holds something (whatever its type: the caller decides whether it is the right one)
/// and a store that cannot be read now (thrown).
package protocol DefaultsReader: Sendable {
    /// The value under `key`, or `nil` when there is none.
    ///
    /// - Throws: ``DefaultsReadError`` when the store cannot be read now: a missing key is not an error.
    func value(forKey key: String) throws(DefaultsReadError) -> StoredDefaultsValue?
}

/// A dictionary of stored values is a reader that is always available (for tests and Linux).
extension Dictionary: DefaultsReader where Key == String, Value == StoredDefaultsValue {
    /// The value under `key`, or `nil`.
    package func value(forKey key: String) throws(DefaultsReadError) -> StoredDefaultsValue? { self[key] }
}

extension StoredDefaultsValue {
    /// Classifies a value as `UserDefaults`, a property list or JSON hands it over: a Boolean `NSNumber` is a
    /// Boolean, an integer one an integer (never truncated from a fraction), on Apple platforms and Linux alike.
    package init(foundationObject value: Any) {
        // Swift values first: how they bridge to NSNumber differs between platforms.
        switch value {
        case let string as String: self = .string(string)
        case let boolean as Bool where type(of: value) == Bool.self: self = .boolean(boolean)
        case let integer as Int where type(of: value) == Int.self: self = .integer(integer)
        case let real as Double where type(of: value) == Double.self: self = .real(real)
        case let data as Data: self = .data(data)
        case let number as NSNumber: self = Self(number: number)
        default: self = .other(typeName: "\(type(of: value))")
        }
    }

    private init(number: NSNumber) {
        #if canImport(Darwin)
        let isBoolean = CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        let isBoolean = type(of: number) != NSNumber.self && String(cString: number.objCType) == "c"
        #endif
        if isBoolean {
            self = .boolean(number.boolValue)
            return
        }
        let integer: Int? =
            switch String(cString: number.objCType) {
            case "f", "d": nil
            case "Q", "L": Int(exactly: number.uint64Value)
            default: Int(exactly: number.int64Value)
            }
        self = integer.map(Self.integer) ?? .real(number.doubleValue)
    }
}

/// A key of a preference store holds a value of the wrong type: nothing was read from it, and it must not be
/// overwritten with defaults (it may be another program's record, or a newer version's).
package struct StoredValueTypeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key read.
    package let key: String
    /// Where it was read (a suite name, `standard`).
    package let store: String
    /// What was found.
    package let found: StoredDefaultsValue
    /// What was expected.
    package let expected: String

    /// Creates the error.
    package init(key: String, store: String, found: StoredDefaultsValue, expected: String) {
        self.key = key
        self.store = store
        self.found = found
        self.expected = expected
    }

    /// `STORE: KEY: found FOUND, expected EXPECTED`.
    package var description: String { "\(store): \(key): found \(found), expected \(expected)" }
}

extension DefaultsReader {
    /// The bytes under `key` (a feature store's record), or `nil` when the key is absent.
    ///
    /// - Throws: ``DefaultsReadError`` when the store cannot be read now, `StoredValueTypeError` when the key holds
    ///   something other than data: both say "unknown", never "nothing stored".
    package func record(forKey key: String, store: String) throws -> Data? {
        switch try value(forKey: key) {
        case nil: return nil
        case .data(let data): return data
        case let found?:
            throw StoredValueTypeError(key: key, store: store, found: found, expected: "the record as data")
        }
    }
}
