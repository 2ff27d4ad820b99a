#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Another process holds the data directory's lock and is stopped (SIGSTOP: a debugger, a suspended process, a slow
/// disk): a take-away still applies at once, no caller waits for it, and start-up comes up. Each test keeps the
/// holder stopped until its checks are done, so on code that waits for the lock the checks time out (bounded waits,
/// no durations asserted).
@Suite struct StoppedLockHolderTests {
    typealias StoppedHolder = StoppedLockHolder

    /// Runs `body` on a thread of its own; the flag says when it returned.
    static func detached(_ body: @escaping @Sendable () -> Void) -> LockedValue<Bool> {
        let returned = LockedValue(false)
        Thread.detachNewThread {
            body()
            returned.withLock { $0 = true }
        }
        return returned
    }

    @Test func aDisableClosesTheGateAndReturnsWhileAStoppedProcessHoldsTheLock() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let store = FileFeatureStore(url: data.stateFile)
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: store,
            diagnosticHandler: { diagnostics.append($0) })
        privacy.enableFeatures([.messageCenter, .analytics])
        let holder = try StoppedHolder(directory: data.url)
        defer { holder.release() }

        let disabled = Self.detached { privacy.disableFeatures(.messageCenter) }
        #expect(eventually(within: 3) { !privacy.isEnabled(.messageCenter) })
        let explained = Self.detached { _ = privacy.reasons() }
        let returned = eventually(within: 3) { disabled.withLock { $0 } && explained.withLock { $0 } }
        #expect(returned, "disableFeatures or reasons() waited for the stopped process")
        // (Waiting for the holder, the manager's lock is taken: nothing below could return.)
        guard returned else { return }
        // Pending, not held (issue 47, item 1): the "no" is an unflushed intent a start reads, no write is held and
        // nothing is reported; the decided flag that stays on stays on, and the store still has the old record.
        #expect(privacy.isEnabled(.analytics))
        #expect(!privacy.isHoldingWrites)
        #expect(!diagnostics.all.contains { if case .storeBusyWritesHeld = $0 { true } else { false } })
        let before = try FeatureStateRecord(decoding: #require(try store.load()))
        #expect(before.enabledFeatures.contains(.messageCenter))
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).contains { $0.disable != 0 })

        // Once the holder lets go, the flusher saves it.
        holder.release()
        let saved = {
            (try? store.load()).flatMap { try? FeatureStateRecord(decoding: $0) }.map {
                !$0.enabledFeatures.contains(.messageCenter)
            } ?? false
        }
        #expect(eventually(within: 10) { saved() })
        let after = try FeatureStateRecord(decoding: #require(try store.load()))
        #expect(after.decidedFeatures.isSuperset(of: [.messageCenter, .analytics]))
        #expect(after.enabledFeatures.contains(.analytics) && !after.enabledFeatures.contains(.messageCenter))
        #expect(!privacy.isEnabled(.messageCenter) && privacy.isEnabled(.analytics))
    }

    @Test func aProcessStartingWhileAStoppedProcessHoldsTheLockComesUpAndCleansUpLater() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile)
        )
        .enableFeatures(.analytics)
        let holder = try StoppedHolder(directory: data.url, leavingTemporary: true)
        defer { holder.release() }
        let temporary = { () -> [String] in
            ((try? FileManager.default.contentsOfDirectory(atPath: data.url.path(percentEncoded: false))) ?? [])
                .filter { $0.contains(".tmp-") }
        }
        #expect(temporary().count == 1)

        let started = LockedValue<PrivacyManager?>(nil)
        _ = Self.detached {
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile))
            started.withLock { $0 = privacy }
        }
        #expect(eventually(within: 3) { started.withLock { $0 } != nil })
        #expect(started.withLock { $0?.isEnabled(.analytics) } == true)

        holder.release()
        // The temporary file of the killed writer goes once the lock is free.
        #expect(eventually(within: 10) { temporary().isEmpty })
    }

    @Test func aConsentDenialClosesItsFeaturesBeforeItsRecordIsWritten() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(
            on: data, policy: ConsentPolicy(version: 1, features: [.analytics: .analytics]))
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(privacy.isEnabled(.analytics))
        let holder = try StoppedHolder(directory: data.url)
        defer { holder.release() }

        let denying = Task { try? await consent.setStatus(.denied, for: .analytics, source: .user) }
        // Polled without holding a thread of the shared pool: the denial's task needs one to start.
        var closed = false
        for _ in 0..<1_500 where !closed {
            try await Task.sleep(for: .milliseconds(2))
            closed = !privacy.isEnabled(.analytics)
        }
        #expect(closed, "the denial did not close the gate while the ledger's lock was held")

        holder.release()
        _ = await denying.value
        #expect(await consent.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
        // Held past the bound, it is recorded once the lock is free.
        let recorded = await eventually(turns: 2_000) {
            (try? FileConsentLedger(url: data.consentLedgerFile).load().records.last?.newStatus) == .denied
        }
        #expect(recorded)
    }

    @Test func theLastFeatureGoingOffForgetsTheIdentifierAtOnceAndDeletesItsFileOnceTheLockIsFree() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile))
        privacy.enableFeatures(.analytics)
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        let old = try #require(try identifier.current())
        let file = data.anonymousIdentifierFile.path(percentEncoded: false)
        let holder = try StoppedHolder(directory: data.url)
        defer { holder.release() }

        let disabled = Self.detached { privacy.disableFeatures(.analytics) }
        let returned = eventually(within: 10) { disabled.withLock { $0 } }
        #expect(returned, "disableFeatures waited for the stopped process to delete the identifier")
        guard returned else { return }
        #expect(FileManager.default.fileExists(atPath: file), "deleted while another process held the lock")
        // Forgotten all the same: a feature back on never hands out the old identifier.
        privacy.enableFeatures(.analytics)
        #expect((try? identifier.current()) != old)
        privacy.disableFeatures(.analytics)

        holder.release()
        #expect(eventually(within: 10) { !FileManager.default.fileExists(atPath: file) })
        privacy.enableFeatures(.analytics)
        let fresh = try #require(try identifier.current())
        #expect(fresh != old)
    }
}
#endif
