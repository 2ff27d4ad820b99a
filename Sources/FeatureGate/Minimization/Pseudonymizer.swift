/// A keyed hash: the same message and key always give the same code, and without the key the code reveals
/// nothing about the message.
///
/// The SDK supplies the key, inside its implementation. On Apple platforms use `HMACSHA256Hasher` (CryptoKit);
/// elsewhere inject an HMAC from the crypto library your SDK already uses. FeatureGate adds no crypto package.
public protocol KeyedHasher: Sendable {
    /// The authentication code of `message` under the hasher's key.
    func authenticationCode(for message: [UInt8]) -> [UInt8]
}

/// Replaces identifiers with stable pseudonyms: a keyed hash, hex-encoded.
///
/// The same identifier always gives the same pseudonym under one key, so events still join; rotating the key
/// unlinks all earlier pseudonyms.
///
/// Printing, dumping or logging a pseudonymizer shows no part of its hasher, whose key is a secret.
public struct Pseudonymizer: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The keyed hash.
    public let hasher: any KeyedHasher

    /// Creates a pseudonymizer over `hasher`.
    public init(hasher: any KeyedHasher) {
        self.hasher = hasher
    }

    /// The pseudonym of `identifier`: the lowercase hex of its keyed hash.
    public func pseudonym(for identifier: String) -> String {
        let code = hasher.authenticationCode(for: Array(identifier.utf8))
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(code.count * 2)
        for byte in code {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// `Pseudonymizer(key redacted)`.
    public var description: String { "Pseudonymizer(key redacted)" }

    /// `Pseudonymizer(key redacted)`.
    public var debugDescription: String { description }

    /// No children: `dump` and the debugger show nothing of the hasher.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

#if canImport(CryptoKit)
import CryptoKit

/// HMAC-SHA256 from CryptoKit, as a ``KeyedHasher`` (Apple platforms).
///
/// Printing, dumping or logging it shows no part of the key.
public struct HMACSHA256Hasher: KeyedHasher, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let key: SymmetricKey

    /// Creates a hasher with `key`. Use at least 32 random bytes, kept by the SDK.
    public init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    /// HMAC-SHA256 of `message`.
    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    /// `HMACSHA256Hasher(key redacted)`.
    public var description: String { "HMACSHA256Hasher(key redacted)" }

    /// `HMACSHA256Hasher(key redacted)`.
    public var debugDescription: String { description }

    /// No children: `dump` and the debugger show nothing of the key.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
#endif
