// `revoke` and `relaunch`: the two halves of the revoke-all kill test (NoopRuntimeTests' RevocationKillTests).
//
//   feature-store-writer revoke DIR SERVER K   runs an SDK with data everywhere on the data directory DIR, then
//                                              revoke-all, and stops itself with SIGKILL at kill point K (1, 2, ...;
//                                              0: never). It prints `identifier UUID` before revoking and
//                                              `points N` (the kill points it passed) if it was not killed.
//   feature-store-writer relaunch DIR SERVER   the next launch on DIR; prints what it saw, one fact per line.
//
// The erasure request goes to a transport that appends `KEY IDENTIFIER` to the file SERVER, as a server would log it.
// Kill points: after every write of the gate state and every ledger append (the wrapping store and ledger count
// them), after each subsystem's purge, and at every step of revoke-all (`RevocationStep`).
import FeatureGate
import Foundation
import NoopRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts kill points, once armed, and stops the process at the one chosen.
final class KillPoints: Sendable {
    private let target: Int
    private let armed = AtomicWord<Bool>(false)
    private let reached = AtomicWord<Int>(0)

    init(target: Int) { self.target = target }

    var count: Int { reached.load(ordering: .relaxed) }

    func arm() { armed.store(true, ordering: .relaxed) }

    func pass(_ name: String) {
        guard armed.load(ordering: .relaxed) else { return }
        if reached.add(1, ordering: .relaxed).newValue == target {
            FileHandle.standardOutput.write(Data("killed at \(name)\n".utf8))
            kill(getpid(), SIGKILL)
        }
    }
}

/// A gate-state store that passes a kill point after each write.
struct CountingStore: FeatureStore {
    let inner: FileFeatureStore
    let points: KillPoints
    func load() throws -> Data? { try inner.load() }
    func save(_ record: Data) throws {
        try inner.save(record)
        points.pass("gate-state save")
    }
    func remove() throws {
        try inner.remove()
        points.pass("gate-state remove")
    }
    func update(_ transform: (Data?) -> Data?) throws {
        try inner.update(transform)
        points.pass("gate-state update")
    }
}

/// A consent ledger that passes a kill point after each append.
struct CountingLedger: ConsentLedger {
    let inner: FileConsentLedger
    let points: KillPoints
    func load() throws -> ConsentLedgerContents { try inner.load() }
    func append(_ record: ConsentRecord) throws {
        try inner.append(record)
        points.pass("ledger append \(record.category)")
    }
    func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
}

/// A subsystem with one file in its own folder of the data directory: written on start, deleted on purge.
final class FolderSubsystem: Subsystem {
    let name: String
    let requiredFeatures: Feature
    let fileName: String
    let storage: GatedStorage
    let onEvent: @Sendable (String) -> Void

    init(
        _ name: String, needs: Feature, fileName: String, root: URL, privacy: PrivacyManager,
        onEvent: @escaping @Sendable (String) -> Void
    ) {
        self.name = name
        self.requiredFeatures = needs
        self.fileName = fileName
        self.onEvent = onEvent
        storage = GatedStorage(
            FileStorage(directory: root.appending(path: name)), features: needs, privacy: privacy, counter: IOCounter())
    }

    func start() async throws {
        onEvent("start \(name)")
        try storage.write(Data(#"{"kept":true}"#.utf8), to: fileName)
    }
    func stop(reason: StopReason) async {}
    func purge() async -> PurgeReport {
        let report: PurgeReport
        do { report = PurgeReport(removedFiles: try storage.purge()) } catch {
            report = PurgeReport(failures: ["\(error)"])
        }
        onEvent("purge \(name)")
        return report
    }
}

/// The server: appends `KEY IDENTIFIER` per erasure request it receives.
struct ServerLogTransport: Transport {
    let log: URL
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let line =
            "\(request.headers[ErasureRequest.idempotencyKeyHeader] ?? "no-key") "
            + String(decoding: request.body, as: UTF8.self) + "\n"
        let handle = try FileHandle(forWritingTo: log)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8))
        try handle.synchronize()
        try handle.close()
        return TransportResponse(statusCode: 200)
    }
}

/// The SDK both halves build: the gate, consent, the identifier and three subsystems on one data directory.
struct KillTestSDK {
    static let subsystems: [(String, Feature, String)] = [
        ("push", .push, "registration.json"), ("analytics", .analytics, "queue.jsonl"),
        ("contacts", .contacts, "contact.json"),
    ]
    let privacy: PrivacyManager
    let consent: ConsentManager
    let identifier: AnonymousIdentifier
    let runtime: SubsystemRuntime
    var revocation: ConsentRevocation
    let erasure: ErasureRequest

    init(
        directory: PrivacyDataDirectory, server: URL, store: any FeatureStore, ledger: any ConsentLedger,
        afterGate: (PrivacyManager) -> Void = { _ in }, onEvent: @escaping @Sendable (String) -> Void
    ) {
        privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: store)
        afterGate(privacy)
        consent = ConsentManager(privacy: privacy, ledger: ledger)
        identifier = AnonymousIdentifier(privacy: privacy, url: directory.anonymousIdentifierFile)
        runtime = SubsystemRuntime(privacy: privacy)
        for (name, needs, file) in Self.subsystems {
            runtime.register(
                FolderSubsystem(
                    name, needs: needs, fileName: file, root: directory.url, privacy: privacy, onEvent: onEvent))
        }
        revocation = ConsentRevocation(consent: consent, runtime: runtime, identifier: identifier)
        let privacy = privacy
        erasure = ErasureRequest(
            via: GatedTransport(
                ServerLogTransport(log: server), features: .analytics, privacy: privacy, counter: IOCounter())
        ) { id in
            TransportRequest(method: "POST", path: "/erasure", body: Data((id?.uuidString ?? "none").utf8))
        }
    }
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The files under `directory`, relative, sorted.
func files(in directory: URL) -> [String] {
    ((try? FileManager.default.subpathsOfDirectory(atPath: directory.path(percentEncoded: false))) ?? []).sorted()
}

func revokeWithKill(directory: URL, server: URL, killPoint: Int) async throws {
    let data = PrivacyDataDirectory(url: directory)
    let points = KillPoints(target: killPoint)
    var sdk = KillTestSDK(
        directory: data, server: server,
        store: CountingStore(inner: FileFeatureStore(url: data.stateFile), points: points),
        ledger: CountingLedger(inner: FileConsentLedger(url: data.consentLedgerFile), points: points),
        onEvent: { event in if event.hasPrefix("purge") { points.pass(event) } })
    sdk.runtime.start()
    try await setAndRecord(sdk.consent, .granted, for: .analytics)
    sdk.privacy.enableFeatures([.push, .contacts])
    await sdk.runtime.settle()
    guard let id = try sdk.identifier.current() else { exit(3) }
    // What a write of the identifier killed before its rename leaves: a temporary copy.
    try Data(id.uuidString.utf8).write(
        to: data.url.appending(path: AtomicFile.temporaryName(for: PrivacyDataDirectory.anonymousIdentifierFileName)))
    say("identifier \(id.uuidString)")
    say("ready")
    sdk.revocation.stepObserver = { step in points.pass("step \(step)") }
    points.arm()
    let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)
    say("points \(points.count)")
    say("complete \(report.isComplete)")
}

func relaunch(directory: URL, server: URL) async {
    let data = PrivacyDataDirectory(url: directory)
    let events = LockedValue<[String]>([])
    let sdk = KillTestSDK(
        directory: data, server: server, store: FileFeatureStore(url: data.stateFile),
        ledger: FileConsentLedger(url: data.consentLedgerFile),
        afterGate: { privacy in
            // The very first check, before anything else runs.
            say("first-check \(privacy.isAnyFeatureEnabled(ignoringRemoteConfig: true) ? "enabled" : "revoked")")
            say("pending \(privacy.pendingRevocation?.requestKey.uuidString ?? "none")")
        },
        onEvent: { event in events.withLock { $0.append(event) } })
    let identifierFile = FileManager.default.fileExists(
        atPath: data.anonymousIdentifierFile.path(percentEncoded: false))
    say("identifier-after-init \(identifierFile ? "present" : "gone")")
    sdk.runtime.start()
    await sdk.runtime.settle()
    say("events \(events.withLock { $0 }.joined(separator: ","))")
    say("files-after-start \(files(in: data.url).joined(separator: ","))")
    let statuses = await sdk.consent.allStatuses
    say("granted \(statuses.filter { $0.value == .granted }.keys.map(\.rawValue).sorted().joined(separator: ","))")
    if let report = await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure) {
        say(
            "finished key=\(report.requestKey?.uuidString ?? "none") erasure=\(report.erasure.wasSent) "
                + "owed=\(report.erasureStillOwed) complete=\(report.isComplete)")
    } else {
        say("finished nothing-pending")
    }
    say("pending-after \(sdk.privacy.pendingRevocation?.requestKey.uuidString ?? "none")")
    say("files-after-finish \(files(in: data.url).joined(separator: ","))")
}
