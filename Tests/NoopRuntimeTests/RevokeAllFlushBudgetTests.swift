import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// Revoke-all's flushes, counted through the file layer's seam (``FlushCountingFileSystem``), as the benchmark's
/// `Device.revokeAll` measures them on the device: the gate, consent (analytics granted), messageCenter enabled and a
/// stored anonymous identifier. Its record (refusals, disables, the purges it owes) is one write of the gate state,
/// its refusals one ledger append, the identifier's deletion one flush of its directory, and the removal of its
/// pending record flushes only its data (a power loss that undoes it leaves the record, and the next start finishes
/// the revocation again): 5 flushes, 2 of them directories (10 and 5 before).
@Suite struct RevokeAllFlushBudgetTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    @Test func revokeAllFlushesAtMostFiveTimesWithTheLockFree() async throws {
        let root = URL(filePath: NSTemporaryDirectory()).appending(path: "revoke-flushes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = PrivacyDataDirectory(url: root.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.messageCenter)
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        _ = try identifier.current()
        await consent.waitForLedgerVerification()
        let revocation = ConsentRevocation(
            consent: consent, runtime: SubsystemRuntime(privacy: privacy), identifier: identifier)

        let counter = FlushCountingFileSystem()
        let report = await FileSystem.$current.withValue(counter.fileSystem) { await revocation.revokeAll() }
        await counter.settle()

        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(!privacy.isAnyEnabled() && privacy.pendingRevocation == nil)
        #expect(!FileManager.default.fileExists(atPath: data.anonymousIdentifierFile.path(percentEncoded: false)))
        let denials = try FileConsentLedger(url: data.consentLedgerFile).load().records.filter {
            $0.newStatus == .denied
        }
        #expect(denials.count == 1)
        #expect(
            counter.flushes <= 5 && counter.directoryFlushes <= 2,
            "\(counter.flushes) flushes, \(counter.directoryFlushes) of them directories: \(counter.flushed)")
    }
}
