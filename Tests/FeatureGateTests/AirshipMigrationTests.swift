import FeatureGate
import Foundation
import Testing

/// A defaults reader that is locked (protected data unavailable) until told otherwise.
private struct LockedDefaults: DefaultsReader {
    func value(forKey key: String) throws(DefaultsReadError) -> StoredDefaultsValue? {
        throw DefaultsReadError(key: key, store: "test suite")
    }
}

/// Importing what Airship's privacy manager stored.
@Suite struct AirshipMigrationTests {
    static let appKey = "APPKEY123"
    static let key = "APPKEY123com.urbanairship.privacymanager.enabledfeatures"

    private func stored(_ record: Data?) throws -> FeatureStateRecord? {
        try record.map { try FeatureStateRecord(decoding: $0) }
    }

    @Test func theKeysAreAirshipsAppKeyPrefixedPreference() {
        #expect(AirshipMigration.storedKeys(appKey: Self.appKey).first == Self.key)
        #expect(
            AirshipMigration.storedKeys(appKey: Self.appKey).last
                == "com.urbanairship.APPKEY123.com.urbanairship.privacymanager.enabledfeatures")
        #expect(
            AirshipMigration.settingsSuiteName(bundleIdentifier: "com.example.app")
                == "com.example.app.airship.settings")
    }

    @Test func aStoredIntegerBecomesDecidedFlagsOnce() throws {
        let store = InMemoryFeatureStore()
        let airship: [String: StoredDefaultsValue] = [Self.key: .integer(1 << 2 | 1 << 4)]
        let result = try AirshipMigration.migrate(appKey: Self.appKey, from: airship, into: store)
        #expect(result.outcome == .migrated([.push, .analytics]))
        #expect(result.diagnostics.isEmpty)
        #expect(
            try stored(store.load()) == FeatureStateRecord(enabledFeatures: [.push, .analytics], decidedFeatures: .all))

        // Once: a later launch (or a choice made in FeatureGate since) is never overwritten.
        let later: [String: StoredDefaultsValue] = [Self.key: .integer(0)]
        let again = try AirshipMigration.migrate(appKey: Self.appKey, from: later, into: store)
        #expect(again.outcome == .storeAlreadyHoldsARecord)
        #expect(try stored(store.load())?.enabledFeatures == [.push, .analytics])

        let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: .all), store: store)
        #expect(privacy.enabledFeatures == [.push, .analytics], "Airship's off flags stay off despite the config")
    }

    @Test func zeroMigratesEverythingOff() throws {
        let store = InMemoryFeatureStore()
        let result = try AirshipMigration.migrate(
            appKey: Self.appKey, from: [Self.key: StoredDefaultsValue.integer(0)], into: store)
        #expect(result.outcome == .migrated([]))
        let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: .all), store: store)
        #expect(privacy.enabledFeatures.isEmpty)
    }

    @Test func theLegacyPrefixIsReadWhenTheCurrentKeyIsAbsent() {
        let legacy = "com.urbanairship.APPKEY123.com.urbanairship.privacymanager.enabledfeatures"
        let result = AirshipMigration.read(appKey: Self.appKey, from: [legacy: StoredDefaultsValue.integer(1 << 1)])
        #expect(result.outcome == .migrated(.messageCenter))
    }

    @Test func retiredAndUnknownBitsAreDroppedAndReported() {
        let bits = 1 << 0 | 1 << 3 | 1 << 7 | 1 << 8 | 1 << 12
        let result = AirshipMigration.read(appKey: Self.appKey, from: [Self.key: StoredDefaultsValue.integer(bits)])
        #expect(result.outcome == .migrated([.inAppAutomation, .featureFlags]))
        #expect(result.diagnostics.map(\.kind) == [.retiredBitsDropped, .unknownBitsDropped])
        #expect(result.diagnostics[0].found.contains("1<<3, 1<<7"))
        #expect(result.diagnostics[1].found.contains("1<<12"))
        #expect(result.diagnostics.allSatisfy { $0.key == Self.key })
    }

    @Test(arguments: [
        StoredDefaultsValue.boolean(true), .string("all"), .real(17.5), .data(Data([1])), .integer(-1),
        .other(typeName: "Date"),
    ])
    func aValueOfTheWrongTypeIsReportedAndNothingIsWritten(value: StoredDefaultsValue) throws {
        let store = InMemoryFeatureStore()
        let result = try AirshipMigration.migrate(appKey: Self.appKey, from: [Self.key: value], into: store)
        #expect(result.outcome == .notMigrated)
        #expect(result.diagnostics.map(\.kind) == [.wrongType])
        #expect(result.diagnostics.first?.found == value.description)
        #expect(try store.load() == nil)
    }

    @Test func anUnavailableStoreMigratesNothingAndSaysSo() throws {
        let store = InMemoryFeatureStore()
        let result = try AirshipMigration.migrate(appKey: Self.appKey, from: LockedDefaults(), into: store)
        #expect(result.outcome == .notMigrated)
        #expect(result.diagnostics.map(\.kind) == [.unavailable])
        #expect(try store.load() == nil)
    }

    @Test func nothingStoredWritesNothing() throws {
        let store = InMemoryFeatureStore()
        let result = try AirshipMigration.migrate(
            appKey: Self.appKey, from: [String: StoredDefaultsValue](), into: store)
        #expect(result.outcome == .nothingStored)
        #expect(try store.load() == nil)
    }
}

/// Classifying Foundation values and reading a record from a preference store.
@Suite struct DefaultsReaderTests {
    @Test func foundationValuesAreClassifiedBooleansApartFromNumbers() throws {
        #expect(StoredDefaultsValue(foundationObject: true) == .boolean(true))
        #expect(StoredDefaultsValue(foundationObject: NSNumber(value: false)) == .boolean(false))
        #expect(StoredDefaultsValue(foundationObject: 17) == .integer(17))
        #expect(StoredDefaultsValue(foundationObject: NSNumber(value: 17)) == .integer(17))
        #expect(StoredDefaultsValue(foundationObject: NSNumber(value: 1.5)) == .real(1.5))
        #expect(StoredDefaultsValue(foundationObject: "x") == .string("x"))
        #expect(StoredDefaultsValue(foundationObject: Data([1, 2])) == .data(Data([1, 2])))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(#"{"b": true, "i": 3}"#.utf8)) as? [String: Any])
        #expect(StoredDefaultsValue(foundationObject: json["b"]!) == .boolean(true))
        #expect(StoredDefaultsValue(foundationObject: json["i"]!) == .integer(3))
        if case .other = StoredDefaultsValue(foundationObject: Date()) {} else { Issue.record("a date is other") }
    }

    @Test func aRecordIsAbsentWrongTypeOrUnavailableNeverConfused() throws {
        let key = "com.featuregate.enabled-features"
        let record = FeatureStateRecord(enabledFeatures: .push).encoded()
        #expect(try [key: StoredDefaultsValue.data(record)].record(forKey: key, store: "s") == record)
        #expect(try [String: StoredDefaultsValue]().record(forKey: key, store: "s") == nil)
        #expect(throws: StoredValueTypeError.self) {
            try [key: StoredDefaultsValue.integer(21)].record(forKey: key, store: "s")
        }
        #expect(throws: DefaultsReadError.self) { try LockedDefaults().record(forKey: key, store: "s") }
    }
}
