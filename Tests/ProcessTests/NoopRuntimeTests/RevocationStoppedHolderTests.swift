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
}
#endif
