import Foundation

/// A store that keeps the record under one key in `UserDefaults`.
///
/// `UserDefaults` is Apple's required-reason API CA92.1: declare it in your privacy manifest when you use this
/// store. `UserDefaults` is one process's cache of a file: other processes (an app's extensions) see a write late or
/// not at all, and take no inter-process lock, so for a data directory shared by processes use ``FileFeatureStore``.
/// On Linux, swift-corelibs-foundation's `UserDefaults` loses writes that are not followed by `synchronize()`, so
/// there every save and remove calls it and throws `CocoaError(.fileWriteUnknown)` when it fails; Apple platforms
/// persist on their own and do not call it.
///
/// A load tells apart a key never written (`nil`), one holding something else (`StoredValueTypeError`: Airship,
/// for one, keeps an integer) and defaults that cannot be read now (``DefaultsReadError``: pass
/// `isDataAvailable`, see ``UserDefaultsReader``). The two errors are thrown, so the manager does not take the
/// configuration as the stored state, nor overwrite the real record with it.
public struct UserDefaultsFeatureStore: FeatureStore, @unchecked Sendable {
    // UserDefaults is thread-safe, and Apple's current SDKs mark it `@unchecked Sendable` (swift-corelibs-foundation
    // does not); `@unchecked` here keeps the conformance independent of the SDK. Every stored property is immutable.
    private let defaults: UserDefaults
    private let reader: UserDefaultsReader
    /// The key that holds the record.
    public let key: String

    /// Creates a store under `key` in `defaults`; `isDataAvailable` says whether protected data can be read now.
    public init(
        defaults: UserDefaults = .standard, key: String = "com.featuregate.enabled-features",
        isDataAvailable: @escaping @Sendable () -> Bool = { true }
    ) {
        self.defaults = defaults
        self.reader = UserDefaultsReader(defaults, storeName: "UserDefaults", isDataAvailable: isDataAvailable)
        self.key = key
    }

    /// Returns the data under the key, or `nil` when the key is absent.
    ///
    /// - Throws: `StoredValueTypeError` or ``DefaultsReadError``.
    public func load() throws -> Data? { try reader.record(forKey: key, store: reader.storeName) }

    /// Sets the data under the key.
    public func save(_ record: Data) throws {
        defaults.set(record, forKey: key)
        try synchronizeOnLinux()
    }

    /// Removes the key.
    public func remove() throws {
        defaults.removeObject(forKey: key)
        try synchronizeOnLinux()
    }

    private func synchronizeOnLinux() throws {
        #if !canImport(Darwin)
        // swift-corelibs-foundation writes the domain's file only here (and non-atomically); without it the write
        // is lost when the process ends. Apple documents `synchronize()` as unneeded there.
        guard defaults.synchronize() else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSDebugDescriptionErrorKey: "UserDefaults key \(key)"])
        }
        #endif
    }
}
