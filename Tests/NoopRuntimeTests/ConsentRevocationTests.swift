import FeatureGate
import Foundation
import NoopRuntime
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A subsystem that keeps one file in its own folder of the data directory: written on start, deleted (with the
/// folder) on purge.
private final class FileKeepingSubsystem: Subsystem {
    let name: String
    let requiredFeatures: Feature
    let fileName: String
    let storage: GatedStorage

    init(_ name: String, needs: Feature, fileName: String, root: URL, privacy: PrivacyManager, ledger: IOCounter) {
        self.name = name
        self.requiredFeatures = needs
        self.fileName = fileName
        storage = GatedStorage(
            FileStorage(directory: root.appending(path: name)), features: needs, privacy: privacy, counter: ledger)
    }

    func start() async throws { try storage.write(Data(#"{"kept":true}"#.utf8), to: fileName) }
    func stop(reason: StopReason) async {}
    func purge() async -> PurgeReport {
        do { return PurgeReport(removedFiles: try storage.purge().map { "\(name)/\($0)" }) } catch {
            return PurgeReport(failures: ["\(error)"])
        }
    }
}

/// An SDK laid out the way `PrivacyDataDirectory` documents: the gate's state, the consent ledger and the
/// anonymous identifier at the top of the data directory, each subsystem's files in a folder of its own.
private struct FileSDK {
    let directory: PrivacyDataDirectory
    let privacy: PrivacyManager
    let consent: ConsentManager
    let identifier: AnonymousIdentifier
    let runtime: SubsystemRuntime
    let transport: RecordingTransport
    let revocation: ConsentRevocation
    let erasure: ErasureRequest

    init(ledger: (any ConsentLedger)? = nil, failingTransport: Bool = false) {
        let root = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-revoke-\(UUID().uuidString)")
        directory = PrivacyDataDirectory(url: root)
        privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []),
            store: FileFeatureStore(url: directory.stateFile)
        )
        consent = ConsentManager(
            privacy: privacy, ledger: ledger ?? FileConsentLedger(url: directory.consentLedgerFile))
        identifier = AnonymousIdentifier(privacy: privacy, url: directory.anonymousIdentifierFile)
        runtime = SubsystemRuntime(privacy: privacy)
        let ioLedger = IOCounter()
        for (name, needs, file) in [
            ("push", Feature.push, "registration.json"),
            ("analytics", Feature.analytics, "queue.jsonl"),
            ("contacts", Feature.contacts, "contact.json"),
        ] {
            runtime.register(
                FileKeepingSubsystem(name, needs: needs, fileName: file, root: root, privacy: privacy, ledger: ioLedger)
            )
        }
        revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: identifier, deadline: unhurriedDeadline)
        transport = RecordingTransport(failing: failingTransport)
        erasure = ErasureRequest(
            via: GatedTransport(transport, features: .analytics, privacy: privacy, counter: ioLedger)
        ) { id in
            TransportRequest(method: "POST", path: "/erasure", body: Data((id?.uuidString ?? "none").utf8))
        }
    }

    /// Every file and folder under the data directory, relative and sorted; empty when it does not exist.
    var files: [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: directory.url.path(percentEncoded: false))) ?? [])
            .sorted()
    }

    func read(_ url: URL) -> Data? { FileManager.default.contents(atPath: url.path(percentEncoded: false)) }

    func cleanUp() { try? FileManager.default.removeItem(at: directory.url) }

    /// Grants analytics and enables push, lets the subsystems start, and creates the anonymous identifier.
    func runWithDataEverywhere() async throws -> UUID {
        runtime.start()
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.push)
        await runtime.settle()
        return try #require(try identifier.current())
    }
}

@Suite struct ConsentRevocationTests {
    @Test func aFailedErasureStaysOwedWithItsIdentifierUntilAResendWithTheSameKey() async throws {
        let sdk = FileSDK(failingTransport: true)
        defer { sdk.cleanUp() }
        let id = try await sdk.runWithDataEverywhere()

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        #expect(!report.erasure.wasSent)
        #expect(report.erasureStillOwed)
        let key = try #require(report.requestKey)
        #expect(sdk.transport.requests.all.map { $0.headers[ErasureRequest.idempotencyKeyHeader] } == [key.uuidString])
        // The identifier survives only in the pending record, which owes the erasure.
        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
        let pending = try #require(sdk.privacy.pendingRevocation)
        #expect(pending.anonymousIdentifier == id && pending.isErasureOwed)
        #expect(pending.areSubsystemsPurged && pending.isIdentifierDeleted)
        #expect(
            String(decoding: try #require(sdk.read(sdk.directory.stateFile)), as: UTF8.self).contains(id.uuidString))

        let working = RecordingTransport()
        let erasure = ErasureRequest(
            via: GatedTransport(working, features: .analytics, privacy: sdk.privacy, counter: IOCounter())
        ) { id in TransportRequest(method: "POST", path: "/erasure", body: Data((id?.uuidString ?? "none").utf8)) }
        let finished = try #require(await sdk.revocation.finishPendingRevocation(erasure: erasure))
        #expect(finished.resumed && finished.erasure.wasSent && !finished.erasureStillOwed)
        #expect(working.requests.all.map { $0.headers[ErasureRequest.idempotencyKeyHeader] } == [key.uuidString])
        #expect(working.requests.all.map(\.body) == [Data(id.uuidString.utf8)])
        #expect(sdk.privacy.pendingRevocation == nil)
        #expect(
            !String(decoding: try #require(sdk.read(sdk.directory.stateFile)), as: UTF8.self).contains(id.uuidString))
        #expect(await sdk.revocation.finishPendingRevocation(erasure: erasure) == nil)
    }

    @Test func revokeAllLeavesOnlyTheGateStateAndTheConsentLedgerOnDisk() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        let id = try await sdk.runWithDataEverywhere()
        // Left behind by an earlier run whose contacts feature was on: the contacts subsystem never runs now.
        try FileStorage(directory: sdk.directory.url.appending(path: "contacts"))
            .write(Data("{}".utf8), to: "contact.json")
        #expect(
            sdk.files == [
                ".featuregate.lock", "analytics", "analytics/queue.jsonl", "anonymous-id", "consent-ledger.jsonl",
                "consent-ledger.jsonl.checkpoint", "contacts",
                "contacts/contact.json", "featuregate-state.json", "push", "push/registration.json",
            ])

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
        #expect(
            sdk.files == [
                ".featuregate.lock", "consent-ledger.jsonl", "consent-ledger.jsonl.checkpoint",
                "featuregate-state.json",
            ])
        let state = try #require(sdk.read(sdk.directory.stateFile))
        #expect(try FeatureStateRecord(decoding: state).enabledFeatures == [])
        let trail = try FileConsentLedger(url: sdk.directory.consentLedgerFile).load().records
        // The trail keeps milliseconds; compare everything else.
        func summary(_ record: ConsentRecord) -> String {
            "\(record.category) \(record.previousStatus)->\(record.newStatus) v\(record.policyVersion) \(record.source)"
        }
        #expect(trail.suffix(3).map(summary) == report.consentRecords.map(summary))
        #expect(report.consentRecords.map(\.category) == [.analytics, .advertising, .thirdPartySharing])
        #expect(report.consentRecords.allSatisfy { $0.newStatus == .denied && $0.source == .user })
        #expect(report.disabledFeatures == [.analytics, .tagsAndAttributes, .push])
        #expect(Set(report.purges.map(\.subsystem)) == ["analytics", "push", "contacts"])
        #expect(
            report.totalPurged.removedFiles.sorted() == [
                "analytics/queue.jsonl", "contacts/contact.json", "push/registration.json",
            ])
        #expect(report.identifierReset)
        #expect(report.isComplete)
        // The erasure request names the identifier that existed before the revocation deleted it.
        #expect(report.erasure.wasSent)
        #expect(sdk.transport.requests.all.map(\.body) == [Data(id.uuidString.utf8)])
        #expect(sdk.privacy.enabledFeatures.isEmpty)
        #expect(await sdk.consent.allStatuses.values.allSatisfy { $0 == .denied })
    }

    @Test func aSecondRevokeAllSendsNoSecondErasureRequestAndChangesNothing() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        let first = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        let ledgerAfterFirst = sdk.read(sdk.directory.consentLedgerFile)
        let stateAfterFirst = sdk.read(sdk.directory.stateFile)

        let second = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        #expect(first.erasure.wasSent)
        guard case .nothingWasEnabled = second.erasure else {
            Issue.record("second erasure outcome: \(second.erasure)")
            return
        }
        #expect(sdk.transport.requests.count == 1)
        #expect(second.consentRecords.isEmpty)
        #expect(second.disabledFeatures.isEmpty)
        #expect(second.purges.isEmpty)
        #expect(!second.identifierReset)
        #expect(sdk.read(sdk.directory.consentLedgerFile) == ledgerAfterFirst)
        #expect(sdk.read(sdk.directory.stateFile) == stateAfterFirst)
    }

    @Test func revokeAllWithEverythingAlreadyOffSendsNothing() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        sdk.runtime.start()
        await sdk.runtime.settle()

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        guard case .nothingWasEnabled = report.erasure else {
            Issue.record("erasure outcome: \(report.erasure)")
            return
        }
        #expect(sdk.transport.requests.count == 0)
        #expect(!report.identifierReset)
        // The denials are the person's decision and are recorded, in the ledger and the gate state; nothing else is
        // written.
        #expect(report.consentRecords.count == 3)
        #expect(
            sdk.files == [
                ".featuregate.lock", "consent-ledger.jsonl", "consent-ledger.jsonl.checkpoint",
                "featuregate-state.json",
            ])
    }

    @Test func revokeAllAfterEverythingWasSwitchedOffDirectlySendsNothingThoughThePermitIsArmed() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        sdk.privacy.disableFeatures(.all)
        await sdk.runtime.settle()
        #expect(sdk.runtime.exitPermit.isArmed)

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        guard case .nothingWasEnabled = report.erasure else {
            Issue.record("erasure outcome: \(report.erasure)")
            return
        }
        #expect(sdk.transport.requests.count == 0)
        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
    }

    @Test func theErasureRequestIsRefusedWhenNothingHasRunSinceTheLastOne() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        _ = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        // Enabled again, but no subsystem needs feature flags: nothing starts, so the permit stays spent.
        sdk.privacy.enableFeatures(.featureFlags)
        await sdk.runtime.settle()
        _ = try sdk.identifier.current()  // an identifier to erase, so the permit is what refuses the request

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        guard case .refusedNoPermit = report.erasure else {
            Issue.record("erasure outcome: \(report.erasure)")
            return
        }
        #expect(report.disabledFeatures == .featureFlags)
        #expect(sdk.transport.requests.count == 1)
    }

    @Test func aFailedErasureRequestIsReportedAndNotRetried() async throws {
        let sdk = FileSDK(failingTransport: true)
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        guard case .failed(let error) = report.erasure else {
            Issue.record("erasure outcome: \(report.erasure)")
            return
        }
        #expect(error is TransportFailure)
        #expect(sdk.transport.requests.count == 1)
        #expect(!sdk.runtime.exitPermit.isArmed)
        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
    }

    @Test func withoutAnErasureRequestNothingIsSent() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        let report = await sdk.revocation.revokeAll(source: .remote)
        guard case .notRequested = report.erasure else {
            Issue.record("erasure outcome: \(report.erasure)")
            return
        }
        #expect(sdk.transport.requests.count == 0)
        #expect(sdk.runtime.exitPermit.isArmed)
        #expect(report.consentRecords.allSatisfy { $0.source == .remote })
    }

    @Test func aLedgerThatRefusesTheDenialsStillEndsWithEverythingOffAndPurged() async throws {
        let ledger = RefusingLedger()
        let sdk = FileSDK(ledger: ledger)
        defer { sdk.cleanUp() }
        sdk.runtime.start()
        ledger.refuse = false
        try await sdk.consent.setStatus(.granted, for: .analytics, source: .user)
        await sdk.runtime.settle()
        _ = try sdk.identifier.current()
        ledger.refuse = true

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)

        #expect(report.consentRecords.isEmpty)
        #expect(report.failures.count == 3)
        #expect(!report.isComplete)
        #expect(sdk.privacy.enabledFeatures.isEmpty)
        #expect(report.purges.map(\.subsystem).contains("analytics"))
        #expect(report.erasure.wasSent)
        #expect(sdk.files == [PrivacyDataDirectory.lockFileName, PrivacyDataDirectory.stateFileName])
    }

    @Test func concurrentRevocationsSendOneErasureRequestPerEnabledPeriod() async throws {
        let privacy = gate()
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: Collector()))
        runtime.start()
        let transport = RecordingTransport()
        let erasure = ErasureRequest(
            via: GatedTransport(transport, features: .analytics, privacy: privacy, counter: IOCounter())
        ) { _ in TransportRequest(method: "POST", path: "/erasure") }
        let identifier = AnonymousIdentifier(privacy: privacy, url: nil)
        let revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: identifier, deadline: unhurriedDeadline)
        let periods = 100
        let callers = 10

        for period in 0..<periods {
            try await consent.setStatus(.granted, for: .analytics, source: .user)
            await runtime.settle()
            _ = try identifier.current()  // something went out under it: there is something to erase
            let sent = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<callers {
                    group.addTask { await revocation.revokeAll(erasure: erasure).erasure.wasSent }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(sent == 1, "period \(period)")
            #expect(privacy.enabledFeatures.isEmpty)
        }
        #expect(transport.requests.count == periods)
    }
}

/// A ledger in memory that refuses appends while `refuse` is set.
private final class RefusingLedger: ConsentLedger {
    struct Refused: Error {}
    private let inner = InMemoryConsentLedger()
    private let refusing = LockedValue(false)
    var refuse: Bool {
        get { refusing.withLock { $0 } }
        set { refusing.withLock { $0 = newValue } }
    }
    func load() throws -> ConsentLedgerContents { try inner.load() }
    func append(_ record: ConsentRecord) throws {
        if refuse { throw Refused() }
        try inner.append(record)
    }
    func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
}

/// Revoke-all in a data directory another process has tampered with: it deletes nothing outside, never hangs, and
/// reports complete only when everything is gone.
@Suite struct RevokeAllHostileDirectoryTests {
    private static func makeDirectory(_ path: String, files: [String: String]) throws {
        for (name, contents) in files {
            let url = URL(filePath: path).appending(path: name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: url)
        }
    }

    private static func tree(_ path: String) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test func theTemporaryFileOfAnInterruptedIdentifierWriteIsRemovedAndReported() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        let id = try await sdk.runWithDataEverywhere()
        // What a process killed at the rename of the identifier's first write leaves behind.
        let temporary = ".anonymous-id.tmp-999999-1"
        try Data(id.uuidString.utf8).write(to: sdk.directory.url.appending(path: temporary))

        let report = await sdk.revocation.revokeAll()

        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
        #expect(report.removedTemporaryFiles == [temporary])
        #expect(report.description.contains("temporary files of interrupted writes removed: \(temporary)"))
        #expect(report.isComplete)
    }

    @Test func aSubsystemFolderThatIsALinkIsRemovedItselfAndItsTargetIsKept() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        let outside = sdk.directory.url.path(percentEncoded: false) + "-outside"
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try Self.makeDirectory(outside, files: ["a.txt": "a", "b.txt": "b", "folder/c.txt": "c"])
        let push = sdk.directory.url.appending(path: "push").path(percentEncoded: false)
        try FileManager.default.removeItem(atPath: push)
        try FileManager.default.createSymbolicLink(atPath: push, withDestinationPath: outside)

        let report = await sdk.revocation.revokeAll()

        #expect(Self.tree(outside) == ["a.txt", "b.txt", "folder", "folder/c.txt"])
        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
        #expect(report.totalPurged.removedFiles.contains("push/" + push))
        #expect(report.isComplete)
    }

    @Test func aDataDirectoryThatIsALinkIsNeverPurgedThroughAndTheRevocationIsIncomplete() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        let root = sdk.directory.url.path(percentEncoded: false)
        let outside = root + "-outside"
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try Self.makeDirectory(
            outside, files: ["push/registration.json": "{}", "analytics/queue.jsonl": "{}", "anonymous-id": "x"])
        try FileManager.default.createSymbolicLink(atPath: root, withDestinationPath: outside)

        let report = await sdk.revocation.revokeAll()

        #expect(Self.tree(outside).contains("push/registration.json"))
        #expect(Self.tree(outside).contains("anonymous-id"))
        #expect(!report.isComplete)
        #expect(!report.totalPurged.failures.isEmpty)
        #expect(report.description.contains("symbolic link"))
    }

    @Test func aFIFOAsTheIdentifierNeitherHangsRevokeAllNorSurvivesIt() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        let file = sdk.directory.anonymousIdentifierFile.path(percentEncoded: false)
        try FileManager.default.removeItem(atPath: file)
        #expect(mkfifo(file, 0o600) == 0)

        let report = await sdk.revocation.revokeAll()

        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
        #expect(report.isComplete)
    }

    @Test func aDanglingLinkInASubsystemFolderIsPurgedWithTheRest() async throws {
        let sdk = FileSDK()
        defer { sdk.cleanUp() }
        _ = try await sdk.runWithDataEverywhere()
        let link = sdk.directory.url.appending(path: "analytics/dangling").path(percentEncoded: false)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/nonexistent-featuregate/x")

        let report = await sdk.revocation.revokeAll()

        #expect(sdk.files == PrivacyDataDirectory.retainedFileNames)
        #expect(report.totalPurged.removedFiles.contains("analytics/dangling"))
        #expect(report.isComplete)
    }
}
