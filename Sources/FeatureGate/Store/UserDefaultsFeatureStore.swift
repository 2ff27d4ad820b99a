#if canImport(Darwin)
import Foundation

/// A store that keeps the record under one key in `UserDefaults` (Apple platforms only).
///
/// `UserDefaults` is Apple's required-reason API CA92.1: declare it in your privacy manifest when you use this
/// store. On Linux, `UserDefaults` writes non-atomically and loses writes without `synchronize()`, so this store
/// is not offered there; use ``FileFeatureStore``.
public struct UserDefaultsFeatureStore: FeatureStore, @unchecked Sendable {
    // UserDefaults is documented as thread-safe but not marked Sendable.
    private let defaults: UserDefaults
    /// The key that holds the record.
    public let key: String

    /// Creates a store under `key` in `defaults`.
    public init(defaults: UserDefaults = .standard, key: String = "com.featuregate.enabled-features") {
        self.defaults = defaults
        self.key = key
    }

    /// Returns the data under the key, or `nil`.
    public func load() throws -> Data? { defaults.data(forKey: key) }

    /// Sets the data under the key.
    public func save(_ record: Data) throws { defaults.set(record, forKey: key) }

    /// Removes the key.
    public func remove() throws { defaults.removeObject(forKey: key) }
}
#endif
