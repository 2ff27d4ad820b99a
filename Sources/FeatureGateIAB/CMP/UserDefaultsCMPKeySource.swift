#if canImport(Darwin)
import Foundation

/// Reads the IAB keys from `UserDefaults`, where CMPs write them (the standard defaults unless told otherwise).
///
/// A string is read as a string, a whole number (or Boolean) as a number; any other stored value is passed on as
/// its description, which the key's reader then rejects as malformed.
public struct UserDefaultsCMPKeySource: CMPKeyValueSource, @unchecked Sendable {
    /// The defaults read. `UserDefaults` is thread-safe.
    public let defaults: UserDefaults

    /// Reads from `defaults`.
    public init(_ defaults: UserDefaults = .standard) {
        self.defaults = defaults
    }

    /// The value stored under `key`, or `nil`.
    public func cmpValue(forKey key: String) -> CMPValue? {
        guard let object = defaults.object(forKey: key) else { return nil }
        if let string = object as? String { return .string(string) }
        if let number = object as? NSNumber {
            // Never truncated: a fractional number goes on as text, which the key's reader rejects.
            return Int(exactly: number.doubleValue).map(CMPValue.number) ?? .string(number.stringValue)
        }
        return .string(String(describing: object))
    }
}

extension CMPConsentSource {
    /// Refreshes whenever `UserDefaults` change (CMPs write their keys there).
    ///
    /// - Returns: The observer; pass it to `NotificationCenter.default.removeObserver(_:)` to stop.
    public nonisolated func refreshOnUserDefaultsChanges() -> any NSObjectProtocol {
        NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: nil, queue: nil
        ) { [self] _ in
            Task { await self.refresh() }
        }
    }
}
#endif
