// Shim of Apple's CryptoKit (iOS 13, macOS 10.15, tvOS 13, watchOS 6) for scripts/check-apple-branches.sh: the
// declarations the package uses, with the SDK's signatures. Bodies never run.
import Foundation

/// https://developer.apple.com/documentation/cryptokit/hashfunction
public protocol HashFunction {
    associatedtype Digest: Sequence where Digest.Element == UInt8
}

/// https://developer.apple.com/documentation/cryptokit/sha256
public struct SHA256: HashFunction {
    /// https://developer.apple.com/documentation/cryptokit/sha256digest
    public struct Digest: Sequence, Sendable {
        public func makeIterator() -> Array<UInt8>.Iterator { fatalError("shim") }
    }
}

/// https://developer.apple.com/documentation/cryptokit/symmetrickey
public struct SymmetricKey: Sendable {
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/init(data:)
    public init<D: ContiguousBytes>(data: D) { fatalError("shim") }
}

/// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode
public struct HashedAuthenticationCode<H: HashFunction>: Sequence, Sendable, Hashable {
    public func makeIterator() -> Array<UInt8>.Iterator { fatalError("shim") }
}

/// https://developer.apple.com/documentation/cryptokit/hmac
public struct HMAC<H: HashFunction> {
    /// https://developer.apple.com/documentation/cryptokit/hmac/authenticationcode(for:using:)
    public static func authenticationCode<D: DataProtocol>(
        for data: D, using key: SymmetricKey
    ) -> HashedAuthenticationCode<H> { fatalError("shim") }
}
