#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Revoke-all while another process holds the data directory's lock, stopped (issue 28): everything closes at once,
/// the call returns within its bounds, and the denials it could not write wait for the lock, not the caller.
@Suite struct RevocationStoppedHolderTests {
    @Test func revokeAllClosesEverythingAndReturnsWhileAStoppedProcessHoldsTheLock() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-revoke-held-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(
            on: data, policy: ConsentPolicy(version: 1, features: [.analytics: .analytics]))
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.push)
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        _ = try identifier.current()
        let revocation = ConsentRevocation(
            consent: consent, runtime: SubsystemRuntime(privacy: privacy), identifier: identifier,
            deadline: .milliseconds(200))
        let holder = try StoppedLockHolder(directory: data.url)
        defer { holder.release() }

        let report = await revokeAllReturning(revocation)
        #expect(report != nil, "revokeAll waited for the stopped process")
        guard let finished = report else { return }
        #expect(!privacy.isAnyEnabled())
        #expect(await consent.status(for: .analytics) == .denied)
        // What it could not write is reported, not waited for.
        #expect(!finished.failures.isEmpty)
        #expect(finished.failures.contains { "\($0)".contains("held") }, "\(finished.failures)")

        holder.release()
        let recorded = await eventually(turns: 2_000) {
            let records = (try? FileConsentLedger(url: data.consentLedgerFile).load().records) ?? []
            return records.last.map { $0.category == .analytics && $0.newStatus == .denied } ?? false
        }
        #expect(recorded, "the held denial was not recorded once the lock was free")
        #expect(!privacy.isAnyEnabled())
    }

    /// Issue 47, item 3: revoke-all does not wait for the lock to delete the identifier's file (its deadline here is
    /// far longer than `revokeAllReturning` waits): the identifier is forgotten at once, its file's deletion is owed
    /// in the pending record, and it is done in the background once the lock is free.
    @Test func revokeAllLeavesTheIdentifiersDeletionOwedAndFinishesItOnceTheLockIsFree() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-revoke-owed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        #expect(try identifier.current() != nil)
        let revocation = ConsentRevocation(
            consent: consent, runtime: SubsystemRuntime(privacy: privacy), identifier: identifier,
            deadline: .seconds(120))
        let holder = try StoppedLockHolder(directory: data.url)
        defer { holder.release() }

        let report = await revokeAllReturning(revocation)
        #expect(report != nil, "revokeAll waited for the lock to delete the identifier's file")
        // Owed, not done: the file is still there while the lock is held, and never handed out again.
        #expect(Self.exists(data.anonymousIdentifierFile))
        #expect(try identifier.current() == nil)
        #expect(privacy.pendingRevocation?.isIdentifierDeleted == false)

        holder.release()
        let deleted = await eventually(turns: 2_000) { !Self.exists(data.anonymousIdentifierFile) }
        #expect(deleted, "the identifier's file was not deleted once the lock was free")
        // No subsystem and no erasure: with the identifier deleted, the revocation is finished, in the store too.
        let finished = await eventually(turns: 2_000) {
            let stored = try? FileFeatureStore(url: data.stateFile).load().map(FeatureStateRecord.init(decoding:))
            return privacy.pendingRevocation == nil && stored != nil && stored?.pendingRevocation == nil
        }
        #expect(finished, "the finished revocation was not recorded: \(String(describing: privacy.pendingRevocation))")
    }

    /// Issue 47, item 3: a process killed right after its revoke-all returned behind a stopped holder leaves the
    /// identifier's deletion owed, durably: the next start deletes the file once the lock is free.
    @Test func aRevokeAllKilledAfterItReturnedLeavesTheIdentifiersDeletionToTheNextStart() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-revoke-owed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))
        do {
            let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
            try await consent.setStatus(.granted, for: .analytics, source: .user)
            #expect(privacy.isEnabled(.analytics))
        }
        // The identifier an earlier run stored (written here directly: no object of this process watches it).
        try Data(UUID().uuidString.utf8).write(to: data.anonymousIdentifierFile)
        let holder = try StoppedLockHolder(directory: data.url)
        defer { holder.release() }

        // The child's revoke-all has a deadline of two minutes: waiting it out would not return within these turns.
        let returned = try takeAwayAndKill("revoke", in: data.url, turns: 2_000)
        #expect(returned, "revoke-all did not return while another process held the lock")
        #expect(Self.exists(data.anonymousIdentifierFile))

        holder.release()
        let (privacy, _) = launchGateAndConsent(on: data, policy: Self.policy)
        #expect(privacy.pendingRevocation?.isIdentifierDeleted == false)
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        let deleted = await eventually(turns: 2_000) { !Self.exists(data.anonymousIdentifierFile) }
        #expect(deleted, "the next start did not delete the identifier's file")
        #expect(try identifier.current() == nil)
        let recorded = await eventually(turns: 2_000) { privacy.pendingRevocation?.isIdentifierDeleted != false }
        #expect(recorded)
    }

    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    static func exists(_ file: URL) -> Bool { FileManager.default.fileExists(atPath: file.path(percentEncoded: false)) }
}
#endif
