import Foundation

/// Imports the enabled features Airship's iOS SDK stored, so that replacing Airship keeps every user's choice.
///
/// Airship keeps its privacy manager's enabled features as an integer (the bit positions FeatureGate shares) in its
/// preference data store: the `UserDefaults` suite ``settingsSuiteName(bundleIdentifier:)``, under
/// ``enabledFeaturesKey`` prefixed with the app key (``storedKeys(appKey:)``; SDK 15 to 16.0.1 used a longer
/// prefix, also read). Call ``migrate(appKey:from:into:)`` once at launch, before creating the `PrivacyManager`:
/// it writes a record only while the FeatureGate store holds none, so it runs once, and never overwrites a choice
/// made in FeatureGate.
///
/// Nothing is guessed: a value of the wrong type, or a store that cannot be read, migrates nothing and says why
/// (the configuration then applies, as with no Airship state). Retired bits (chat `1<<3`, location `1<<7`) and
/// bits Airship never defined are dropped and reported. Airship's own data is left as it is.
public enum AirshipMigration {
    /// The preference Airship's privacy manager keeps its enabled features under, after the app-key prefix.
    public static let enabledFeaturesKey = "com.urbanairship.privacymanager.enabledfeatures"

    /// The bits Airship retired: chat (`1<<3`) and location (`1<<7`).
    public static let retiredBits: UInt = 1 << 3 | 1 << 7

    /// The `UserDefaults` suite Airship's preference data store uses: `BUNDLE-ID.airship.settings`.
    public static func settingsSuiteName(bundleIdentifier: String) -> String {
        "\(bundleIdentifier).airship.settings"
    }

    /// The keys the enabled features may be stored under, current first: `APPKEY` + the preference, then
    /// `com.urbanairship.APPKEY.` + the preference (SDK 15 to 16.0.1).
    public static func storedKeys(appKey: String) -> [String] {
        [appKey + enabledFeaturesKey, "com.urbanairship.\(appKey)." + enabledFeaturesKey]
    }

    /// What a migration did.
    public enum Outcome: Sendable, Hashable {
        /// The features were written to the store as decided flags (every built-in flag decided).
        case migrated(Feature)
        /// The store already held a record: nothing was read or written.
        case storeAlreadyHoldsARecord
        /// Airship stored nothing: nothing was written.
        case nothingStored
        /// The stored value could not be used; nothing was written (see the diagnostics).
        case notMigrated
    }

    /// A problem the migration met, with the key, what was found and what was expected.
    public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
        /// What kind of problem.
        public enum Kind: Sendable, Hashable {
            /// The value is not an integer; nothing was migrated.
            case wrongType
            /// The store could not be read (the device is locked); nothing was migrated. Try again later.
            case unavailable
            /// Bits Airship retired (chat, location) were set; they were dropped.
            case retiredBitsDropped
            /// Bits Airship never defined were set; they were dropped.
            case unknownBitsDropped
        }

        /// What kind of problem.
        public let kind: Kind
        /// The key read.
        public let key: String
        /// What was found.
        public let found: String
        /// What was expected.
        public let expected: String

        /// `KEY: found FOUND, expected EXPECTED`.
        public var description: String { "\(key): found \(found), expected \(expected)" }
    }

    /// The result of ``read(appKey:from:)`` and ``migrate(appKey:from:into:)``.
    public struct Result: Sendable, Hashable {
        /// What was done.
        public var outcome: Outcome
        /// What was dropped or could not be read.
        public var diagnostics: [Diagnostic]
    }

    /// Reads Airship's stored features without writing anything: `.migrated(features)` says what a migration
    /// would write.
    public static func read(appKey: String, from reader: UserDefaultsReader) -> Result {
        read(appKey: appKey, from: reader as any DefaultsReader)
    }

    /// Writes Airship's stored features to `store` as decided flags, if the store holds no record yet.
    ///
    /// - Throws: What `store` throws when it cannot be read or written; nothing was migrated then.
    @discardableResult
    public static func migrate(
        appKey: String, from reader: UserDefaultsReader, into store: any FeatureStore
    ) throws -> Result {
        try migrate(appKey: appKey, from: reader as any DefaultsReader, into: store)
    }

    /// ``read(appKey:from:)`` from any preference store (a dictionary in tests).
    package static func read(appKey: String, from reader: any DefaultsReader) -> Result {
        for key in storedKeys(appKey: appKey) {
            let stored: StoredDefaultsValue?
            do {
                stored = try reader.value(forKey: key)
            } catch {
                return Result(
                    outcome: .notMigrated,
                    diagnostics: [
                        Diagnostic(
                            kind: .unavailable, key: key, found: "protected data unavailable (device locked)",
                            expected: "a readable store")
                    ])
            }
            guard let stored else { continue }
            guard case .integer(let value) = stored, value >= 0 else {
                return Result(
                    outcome: .notMigrated,
                    diagnostics: [
                        Diagnostic(
                            kind: .wrongType, key: key, found: stored.description,
                            expected: "a non-negative integer of Airship feature bits")
                    ])
            }
            return features(from: UInt(value), key: key)
        }
        return Result(outcome: .nothingStored, diagnostics: [])
    }

    /// ``migrate(appKey:from:into:)`` from any preference store (a dictionary in tests).
    @discardableResult
    package static func migrate(
        appKey: String, from reader: any DefaultsReader, into store: any FeatureStore
    ) throws -> Result {
        guard try store.load() == nil else { return Result(outcome: .storeAlreadyHoldsARecord, diagnostics: []) }
        let result = read(appKey: appKey, from: reader)
        if case .migrated(let features) = result.outcome {
            try store.save(FeatureStateRecord(enabledFeatures: features, decidedFeatures: .all).encoded())
        }
        return result
    }

    private static func features(from bits: UInt, key: String) -> Result {
        var diagnostics: [Diagnostic] = []
        let retired = bits & retiredBits
        if retired != 0 {
            diagnostics.append(
                Diagnostic(
                    kind: .retiredBitsDropped, key: key, found: "retired bits \(bitList(retired)) (chat, location)",
                    expected: "the bits of Airship's current features"))
        }
        let unknown = bits & ~(Feature.all.rawValue | retiredBits)
        if unknown != 0 {
            diagnostics.append(
                Diagnostic(
                    kind: .unknownBitsDropped, key: key, found: "bits Airship never defined \(bitList(unknown))",
                    expected: "the bits of Airship's current features"))
        }
        return Result(outcome: .migrated(Feature(rawValue: bits & Feature.all.rawValue)), diagnostics: diagnostics)
    }

    private static func bitList(_ bits: UInt) -> String {
        (0..<UInt.bitWidth).filter { bits & (1 << $0) != 0 }.map { "1<<\($0)" }.joined(separator: ", ")
    }
}
