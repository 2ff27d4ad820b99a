import FeatureGate
import FeatureGateConfig
import FeatureGateStack
import Foundation
import NoopRuntime
import Testing

/// A data directory that the test removes.
private struct Directory {
    let url = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-stack-\(UUID().uuidString)")

    /// Every file and folder under the directory, relative and sorted; empty when it does not exist.
    var files: [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: url.path(percentEncoded: false))) ?? []).sorted()
    }

    func config(_ json: String) throws -> URL {
        let file = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-stack-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        return file
    }

    func cleanUp() { try? FileManager.default.removeItem(at: url) }
}

/// A transport that records every request and answers 200.
private final class RecordingTransport: Transport {
    let requests = LockedValue<[TransportRequest]>([])
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        requests.withLock { $0.append(request) }
        return TransportResponse(statusCode: 200)
    }
    var paths: [String] { requests.withLock { $0.map { "\($0.method) \($0.path)" } } }
}

/// An analytics event of the test SDK.
private struct Tapped: Codable, Sendable, Equatable {
    var button: String
}

@Suite struct PrivacyStackTests {
    @Test func aDefaultOffStackFromAConfigFileWritesNothingUntilSomethingIsEnabled() async throws {
        let directory = Directory()
        defer { directory.cleanUp() }
        let stack = try PrivacyStack(
            configFile: try directory.config(#"{"enabledFeatures": []}"#), dataDirectory: directory.url)
        stack.register(StorageSubsystem("push", storage: stack.storage("push", for: .push)))
        #expect(await stack.start() == nil)
        await stack.settle()
        #expect(stack.privacy.enabledFeatures.isEmpty)
        #expect(directory.files.isEmpty)
        #expect(stack.counter.totals.isSilent)
    }

    @Test func aConfigFileWithATypoIsAnErrorNotEverythingOn() throws {
        let directory = Directory()
        defer { directory.cleanUp() }
        #expect(throws: ConfigError.self) {
            try PrivacyStack(
                configFile: try directory.config(#"{"enabledFeatures": ["anlytics"]}"#), dataDirectory: directory.url)
        }
    }

    /// The README's five steps, end to end: a config file; an analytics buffer with an upload and a push
    /// registration, gated; consent granted and denied, observed; revoke-all with an erasure.
    @Test func theFiveStepsOfTheReadme() async throws {
        let directory = Directory()
        defer { directory.cleanUp() }
        let server = RecordingTransport()
        let stack = try PrivacyStack(
            configFile: try directory.config(#"{"enabledFeatures": []}"#), dataDirectory: directory.url)

        let uploads = stack.transport(server, for: .analytics)
        let events = stack.eventBuffer(
            of: Tapped.self, for: .analytics, backends: [UploadBackend(transport: uploads, path: "/events")])
        stack.register(
            StorageSubsystem("analytics", storage: stack.storage("analytics", for: .analytics), eventQueues: [events]))
        stack.register(
            StorageSubsystem("push", storage: stack.storage("push", for: .push)) { storage in
                try storage.write(Data(#"{"token":"t"}"#.utf8), to: "registration.json")
            })
        let erasure = ErasureRequest(via: uploads) { id in
            TransportRequest(method: "DELETE", path: "/users/\(id?.uuidString ?? "unknown")")
        }
        await stack.start(erasure: erasure)

        let changes = LockedValue<[String]>([])
        let token = stack.consent.observe { change in
            changes.withLock { $0.append("\(change.category) \(change.current)") }
        }
        defer { token.cancel() }
        #expect(throws: GatedIOError.self) { try events.track(Tapped(button: "before consent")) }

        try await stack.consent.setStatus(.granted, for: .analytics, source: .user)
        stack.privacy.enableFeatures(.push)
        await stack.settle()
        _ = try stack.identifier.current()
        try events.track(Tapped(button: "buy"))
        // The grant's consent change, then the event.
        #expect(String(describing: await events.flush()) == "flushed: upload delivered 2 events")
        try events.track(Tapped(button: "queued, then purged"))
        #expect(directory.files.contains("push/registration.json"))

        try await stack.consent.setStatus(.denied, for: .advertising, source: .user)
        #expect(changes.withLock { $0 } == ["analytics granted", "advertising denied"])

        let report = await stack.revokeAll(erasure: erasure)
        #expect(report.isComplete)
        #expect(report.erasure.wasSent)
        #expect(Set(report.purges.map(\.subsystem)) == ["analytics", "push"])
        #expect(report.totalPurged.removedFiles == ["push/registration.json"])
        #expect(report.totalPurged.droppedItems == 2, "the queued event and the refusal's consent change")
        #expect(Set(report.stoppedSubsystems) == ["analytics", "push"])
        #expect(server.paths.first == "POST /events")
        #expect(server.paths.last?.hasPrefix("DELETE /users/") == true)
        #expect(directory.files == PrivacyDataDirectory.retainedFileNames)
    }

    @Test func startFinishesARevocationAKilledProcessLeftPending() async throws {
        let directory = Directory()
        defer { directory.cleanUp() }
        let configuration = PrivacyConfiguration(enabledFeatures: [])
        do {
            // The process that is killed: push ran and wrote its file; revoke-all recorded that it began, then died.
            let stack = PrivacyStack(configuration: configuration, dataDirectory: directory.url)
            stack.register(
                StorageSubsystem("push", storage: stack.storage("push", for: .push)) { storage in
                    try storage.write(Data("{}".utf8), to: "registration.json")
                })
            await stack.start()
            stack.privacy.enableFeatures(.push)
            await stack.settle()
            _ = stack.privacy.beginRevocation(
                PendingRevocation(anonymousIdentifier: try stack.identifier.current(), isErasureOwed: true),
                refusing: [.analytics])
            await stack.runtime.shutdown()
        }
        #expect(directory.files.contains("push/registration.json"))

        let server = RecordingTransport()
        let stack = PrivacyStack(configuration: configuration, dataDirectory: directory.url)
        stack.register(StorageSubsystem("push", storage: stack.storage("push", for: .push)))
        let erasure = ErasureRequest(via: stack.transport(server, for: .push)) { _ in
            TransportRequest(method: "DELETE", path: "/me")
        }
        let finished = try #require(await stack.start(erasure: erasure))
        #expect(finished.resumed)
        #expect(finished.erasure.wasSent)
        #expect(server.paths == ["DELETE /me"])
        #expect(stack.privacy.pendingRevocation == nil)
        #expect(!directory.files.contains("push/registration.json"))
        #expect(await stack.start(erasure: erasure) == nil)
    }

    /// Revoke-all is the user's refusal, and a config's `resetEnabledFeatures` keeps refusals: every later launch
    /// starts with every feature off, and only what the app then enables comes back.
    @Test func revokeAllSurvivesEveryLaunchThatResetsTheConfiguration() async throws {
        let directory = Directory()
        defer { directory.cleanUp() }
        let config = try directory.config(
            #"{"enabledFeatures": ["push", "in_app_automation", "analytics"], "resetEnabledFeatures": true}"#)
        do {
            let stack = try PrivacyStack(configFile: config, dataDirectory: directory.url)
            #expect(stack.configurationWarnings.map(\.kind) == [.resetDiscardsChoices])
            await stack.start()
            // Analytics waits for consent (the default policy is opt-in); push and in-app automation map no category.
            #expect(stack.privacy.enabledFeatures == [.push, .inAppAutomation])
            let report = await stack.revokeAll()
            #expect(report.isComplete)
            #expect(stack.privacy.enabledFeatures.isEmpty)
        }
        for _ in 0..<2 {
            let relaunch = try PrivacyStack(configFile: config, dataDirectory: directory.url)
            await relaunch.start()
            #expect(relaunch.privacy.enabledFeatures.isEmpty)
            for flag in FeatureCatalog.builtIn.allFeatures.flags {
                let reason = relaunch.privacy.reason(for: flag)
                #expect(reason.source == .revocation)
                #expect(reason.blockingLayers.contains(.local))
            }
        }

        // An explicit enable turns on that feature alone, and it stays the app's decision until the next reset,
        // which discards it (it is not a refusal) while everything else stays revoked.
        let enabling = try PrivacyStack(configFile: config, dataDirectory: directory.url)
        enabling.privacy.enableFeatures(.push)
        #expect(enabling.privacy.enabledFeatures == .push)
        #expect(enabling.privacy.reason(for: .push).source == .app)
        #expect(enabling.privacy.reason(for: .analytics).source == .revocation)

        let afterEnable = try PrivacyStack(configFile: config, dataDirectory: directory.url)
        #expect(afterEnable.privacy.enabledFeatures == .push)
        #expect(afterEnable.privacy.reason(for: .push).source == .reset)
        #expect(afterEnable.privacy.reason(for: .inAppAutomation).source == .revocation)

        // A consent grant of a category gives back what it maps, and only that.
        let mapped = try #require(ConsentPolicy.default.features[.analytics])
        try await afterEnable.consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(afterEnable.privacy.enabledFeatures == mapped.union(.push))
        #expect(!afterEnable.privacy.isEnabled(.inAppAutomation))
    }

    @Test func theLogBackendWritesOnlyWhatItsGateLetsThrough() async throws {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
        let lines = LockedValue<[String]>([])
        let log = LogEventBackend<Tapped>(
            name: "log", format: { $0.button }, write: { line in lines.withLock { $0.append(line) } })
        let buffer = GatedEventBuffer(features: .analytics, capacity: 10, privacy: privacy, backends: [log])
        #expect(throws: GatedIOError.self) { try buffer.track(Tapped(button: "off")) }
        _ = await buffer.flush()
        #expect(lines.withLock { $0 }.isEmpty)

        privacy.enableFeatures(.analytics)
        try buffer.track(Tapped(button: "a"))
        try buffer.track(Tapped(button: "b"))
        let report = await buffer.flush()
        #expect(lines.withLock { $0 } == ["log: a", "log: b"])
        #expect(String(describing: report) == "flushed: log delivered 2 events")

        // The system writer (standard error here) takes a batch without failing.
        try await LogEventBackend<Tapped>().deliver([])
    }
}
