import FeatureGate
import Foundation
import Testing

@Suite struct PendingRevocationTests {
    static let pending = PendingRevocation(
        requestKey: UUID(uuidString: "6C3E2A4B-8F1D-4E55-9A0B-1C2D3E4F5A6B")!,
        anonymousIdentifier: UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!,
        beganAt: Date(timeIntervalSince1970: 1_790_000_000.75), isErasureOwed: true)

    @Test func aRecordKeepsItsPendingRevocationThroughEncodingAndWritesNoneWithoutOne() throws {
        var record = FeatureStateRecord(enabledFeatures: [], deniedConsentCategories: [.analytics])
        let without = String(decoding: record.encoded(), as: UTF8.self)
        #expect(!without.contains("pendingRevocation"))
        record.pendingRevocation = Self.pending
        let decoded = try FeatureStateRecord(decoding: record.encoded())
        #expect(decoded == record)
        #expect(decoded.pendingRevocation?.beganAt == Date(timeIntervalSince1970: 1_790_000_000))
        #expect(decoded.encoded() == record.encoded())
    }

    @Test func aSaveThatDoesNotTouchThePendingRevocationKeepsTheStoredOne() {
        var stored = FeatureStateRecord(enabledFeatures: [])
        stored.pendingRevocation = Self.pending
        let before = FeatureStateRecord(enabledFeatures: [.push], decidedFeatures: [.push])
        let after = FeatureStateRecord(enabledFeatures: [], decidedFeatures: [.push])
        #expect(stored.merging(changeFrom: before, to: after).pendingRevocation == Self.pending)
        var finished = before
        finished.pendingRevocation = Self.pending
        #expect(stored.merging(changeFrom: finished, to: before).pendingRevocation == nil)
    }

    @Test func aRevokeAllJoiningAnUnfinishedOneKeepsItsKeyAndOwesWhatEitherOwes() {
        var earlier = Self.pending
        earlier.markErasureDone()
        earlier.areSubsystemsPurged = true
        let newer = PendingRevocation(anonymousIdentifier: UUID(), isErasureOwed: true)
        let joined = earlier.joined(by: newer)
        #expect(joined.requestKey == earlier.requestKey)
        #expect(joined.isErasureOwed && joined.anonymousIdentifier == newer.anonymousIdentifier)
        #expect(!joined.areSubsystemsPurged && !joined.isIdentifierDeleted)
        #expect(Self.pending.joined(by: newer).anonymousIdentifier == Self.pending.anonymousIdentifier)
    }

    @Test func aResetDoesNotUndoAnUnfinishedRevocation() throws {
        var record = FeatureStateRecord(enabledFeatures: [], deniedConsentCategories: [.analytics])
        record.pendingRevocation = Self.pending
        let store = InMemoryFeatureStore(record: record.encoded())
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all, resetEnabledFeatures: true), store: store)
        #expect(privacy.enabledFeatures.isEmpty)
        #expect(privacy.pendingRevocation == Self.pending)
        #expect(try store.load() == record.encoded())
    }

    @Test func startUpRemovesTemporaryFilesOfInterruptedWritesAndTouchesNothingWithoutThem() throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "pending-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = PrivacyDataDirectory(url: directory)
        func names() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path()).sorted()
        }

        _ = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: files.stateFile))
        #expect(try names() == [])

        let leftover = ".anonymous-id.tmp-4242-7"
        try Data(UUID().uuidString.utf8).write(to: directory.appending(path: leftover))
        try Data("{}".utf8).write(to: directory.appending(path: "unrelated"))
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: files.stateFile))
        #expect(try names() == [PrivacyDataDirectory.lockFileName, "unrelated"])
        #expect(privacy.startupDiagnostics.isEmpty)
    }
}
