import Foundation

/// Reads `UserDefaults` for ``AirshipMigration`` (and the package's other readers of preference stores).
///
/// `UserDefaults` answers `nil` both for a missing key and while the device is locked and its data protected (a
/// prewarmed or background launch before the first unlock). Pass `isDataAvailable` to tell them apart: with it
/// returning `false`, a missing key reads as unreadable instead of absent (``AirshipMigration`` then reports
/// a diagnostic of kind `.unavailable` and migrates nothing). In an iOS app, return
/// `UIApplication.isProtectedDataAvailable` as last seen on the main actor (kept in a lock or an atomic), updated on
/// `protectedDataDidBecomeAvailableNotification` and `protectedDataWillBecomeUnavailableNotification`.
public struct UserDefaultsReader: DefaultsReader, @unchecked Sendable {
    // UserDefaults is thread-safe, and Apple's current SDKs mark it `@unchecked Sendable` (swift-corelibs-foundation
    // does not); `@unchecked` here keeps the conformance independent of the SDK. Every stored property is immutable.
    private let defaults: UserDefaults
    /// The store's name in errors.
    public let storeName: String
    private let isDataAvailable: @Sendable () -> Bool

    /// Reads `defaults`, named `storeName` in errors; `isDataAvailable` says whether its data can be read now.
    public init(
        _ defaults: UserDefaults = .standard, storeName: String = "standard",
        isDataAvailable: @escaping @Sendable () -> Bool = { true }
    ) {
        self.defaults = defaults
        self.storeName = storeName
        self.isDataAvailable = isDataAvailable
    }

    /// The value under `key`, classified; `nil` when absent.
    package func value(forKey key: String) throws(DefaultsReadError) -> StoredDefaultsValue? {
        guard let object = defaults.object(forKey: key) else {
            if !isDataAvailable() { throw DefaultsReadError(key: key, store: storeName) }
            return nil
        }
        return StoredDefaultsValue(foundationObject: object)
    }
}
