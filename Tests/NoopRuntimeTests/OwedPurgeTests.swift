import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// A "no" owes its subsystems' purge, recorded with it in the gate state: a kill between the "no" and the purge
/// leaves files of a feature that is off, and the next start purges them (issue 36). With nothing owed, a start
/// calls no subsystem whose features are off.
@Suite struct OwedPurgeTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    enum TakeAway: String, CaseIterable {
        case disable, consentRefusal
    }

    /// One launch on `data`: the gate, consent, and a runtime with an analytics subsystem over a file storage and
    /// a recording push subsystem (push is off throughout).
    struct Launch {
        let privacy: PrivacyManager
        let consent: ConsentManager
        let storage: GatedStorage
        let runtime: SubsystemRuntime
        let log = Collector<String>()

        init(_ data: PrivacyDataDirectory) {
            (privacy, consent) = launchGateAndConsent(on: data, policy: OwedPurgeTests.policy)
            storage = GatedStorage(
                FileStorage(directory: data.url.appending(path: "analytics")), features: .analytics, privacy: privacy)
            runtime = SubsystemRuntime(privacy: privacy)
            runtime.register(StorageSubsystem("analytics", storage: storage))
            runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        }
    }

    static func directory() -> URL {
        URL(filePath: NSTemporaryDirectory()).appending(path: "noop-owed-purge-\(UUID().uuidString)")
    }

    static func owed(_ data: PrivacyDataDirectory) throws -> Feature {
        let stored = try #require(try FileFeatureStore(url: data.stateFile).load())
        return try FeatureStateRecord(decoding: stored).purgeOwedFeatures
    }

    /// What a start after a kill finds owed: the gate state with the take-aways recorded as intents and not folded
    /// yet (a disable's, until its flush off the caller's thread) read over it, as a start reads them. The intents are
    /// read first: their removal follows the state's replacement that folds them.
    static func owedAtNextStart(_ data: PrivacyDataDirectory) throws -> Feature {
        let intents = IntentJournal.pending(in: data.url.path(percentEncoded: false))
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        return intents.reduce(stored) { $1.applied(to: $0) }.purgeOwedFeatures
    }

    static func analyticsFiles(_ data: PrivacyDataDirectory) -> [String] {
        let folder = data.url.appending(path: "analytics").path(percentEncoded: false)
        return (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    }

    @Test(arguments: TakeAway.allCases)
    func aFileLeftByANoKilledBeforeItsPurgeIsPurgedByTheNextStartOnce(kind: TakeAway) async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))

        // The first process: analytics granted, a file written, then the "no"; it dies before any runtime purged.
        let first = Launch(data)
        try await first.consent.setStatus(.granted, for: .analytics, source: .user)
        try first.storage.write(Data("event".utf8), to: "queue.jsonl")
        switch kind {
        case .disable: first.privacy.disableFeatures(.analytics)
        case .consentRefusal: try await first.consent.setStatus(.denied, for: .analytics, source: .user)
        }
        #expect(Self.analyticsFiles(data) == ["queue.jsonl"])
        #expect(try Self.owedAtNextStart(data).contains(.analytics), "the \"no\" did not record the purge it owes")

        // The next start purges it before anything else, and records the purge done.
        let second = Launch(data)
        #expect(!second.privacy.isEnabled(.analytics))
        second.runtime.start()
        await second.runtime.settle()
        #expect(Self.analyticsFiles(data).isEmpty, "\(kind): the file outlived the next start")
        #expect(second.runtime.purges().map(\.subsystem) == ["analytics"])
        #expect(second.log.all.isEmpty, "push owed nothing, so it was not called")
        #expect(try !Self.owed(data).contains(.analytics))

        // Done once: the start after that calls nothing.
        let third = Launch(data)
        third.runtime.start()
        await third.runtime.settle()
        #expect(third.runtime.purges().isEmpty)
        #expect(third.log.all.isEmpty)
    }

    @Test func aNoWhoseRuntimePurgedOwesNothingAfterwards() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))
        let launch = Launch(data)
        try await launch.consent.setStatus(.granted, for: .analytics, source: .user)
        launch.runtime.start()
        await launch.runtime.settle()
        try launch.storage.write(Data("event".utf8), to: "queue.jsonl")

        launch.privacy.disableFeatures(.analytics)
        await launch.runtime.settle()
        #expect(Self.analyticsFiles(data).isEmpty)
        #expect(try Self.owed(data).isEmpty, "the runtime purged, yet the purge is still owed")

        // So the next start purges nothing.
        let next = Launch(data)
        next.runtime.start()
        await next.runtime.settle()
        #expect(next.runtime.purges().isEmpty)
    }
}
