#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A consent change never waits for a lock another process keeps (issue 28, part 2): past 100 ms it is held, a
/// refusal in force at once and a grant once recorded, and it is recorded with the gate state it decides once the
/// lock is free, in the order the changes were made. The holder stays stopped until each test's checks are done, so
/// on code that waits for the lock the checks time out (bounded waits, no durations asserted).
@Suite struct HeldConsentChangeTests {
    typealias StoppedHolder = StoppedLockHolder

    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics, .advertising: .inAppAutomation])

    /// A gate and its consent on a data directory of their own, with `granted` granted before any lock is held.
    struct Fixture {
        let directory = TemporaryDirectory()
        let data: PrivacyDataDirectory
        let privacy: PrivacyManager
        let consent: ConsentManager
        let diagnostics = Collector<ConsentDiagnostic>()

        init(granting granted: [ConsentCategory] = []) async throws {
            data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
            (privacy, consent) = Self.start(on: data, diagnostics: diagnostics)
            for category in granted { try await consent.setStatus(.granted, for: category, source: .user) }
        }

        static func start(
            on data: PrivacyDataDirectory, diagnostics: Collector<ConsentDiagnostic>? = nil
        ) -> (PrivacyManager, ConsentManager) {
            launchGateAndConsent(on: data, policy: HeldConsentChangeTests.policy) { diagnostics?.append($0) }
        }

        /// The ledger's statuses, oldest first, as (category, status).
        func ledger() throws -> [String] {
            try FileConsentLedger(url: data.consentLedgerFile).load().records.map {
                "\($0.category) \($0.newStatus)"
            }
        }

        /// The refusals the gate state keeps on disk.
        func storedRefusals() throws -> Set<ConsentCategory> {
            guard let data = try FileFeatureStore(url: data.stateFile).load() else { return [] }
            return try FeatureStateRecord(decoding: data).deniedConsentCategories
        }
    }

    /// A call made on a task of its own: whether it returned, and what it threw.
    final class Call: Sendable {
        private let outcome = LockedValue<ConsentRecordingError??>(nil)

        init(_ body: @escaping @Sendable () async throws(ConsentRecordingError) -> Void) {
            Task { [outcome] in
                do throws(ConsentRecordingError) {
                    try await body()
                    outcome.withLock { $0 = .some(nil) }
                } catch {
                    outcome.withLock { $0 = .some(error) }
                }
            }
        }

        var hasReturned: Bool { outcome.withLock { $0 != nil } }
        var error: ConsentRecordingError? { outcome.withLock { $0 ?? nil } }
    }

    @Test func aDenialReturnsInForceAndIsRecordedWithItsGateStateOnceTheStoppedHolderLetsGo() async throws {
        let fixture = try await Fixture(granting: [.analytics])
        defer { fixture.directory.cleanUp() }
        #expect(fixture.privacy.isEnabled(.analytics))
        let holder = try StoppedHolder(directory: fixture.data.url)
        defer { holder.release() }

        let call = Call { () async throws(ConsentRecordingError) in
            _ = try await fixture.consent.setStatus(.denied, for: .analytics, source: .user)
        }
        let returned = await eventually(turns: 2_000) { call.hasReturned }
        #expect(returned, "setStatus waited for the stopped process")
        guard returned else { return }
        // A refusal takes no lock (issue 47, item 1): it returns recorded as an unflushed intent, not held.
        #expect(call.error == nil, "\(String(describing: call.error))")
        #expect(!fixture.privacy.isEnabled(.analytics))
        #expect(await fixture.consent.status(for: .analytics) == .denied)
        // Nothing was written but the intent while the other process held the lock.
        #expect(try fixture.ledger() == ["analytics granted"])
        #expect(try fixture.storedRefusals().isEmpty)
        #expect(IntentJournal.pending(in: fixture.data.url.path(percentEncoded: false)).count == 1)

        holder.release()
        let recorded = await eventually(turns: 2_000) {
            (try? fixture.ledger()) == ["analytics granted", "analytics denied"]
                && (try? fixture.storedRefusals()) == [.analytics]
        }
        #expect(recorded, "\((try? fixture.ledger()) ?? [])")
        // A fresh start equals the full fold, and its gate agrees.
        let (freshPrivacy, fresh) = Fixture.start(on: fixture.data)
        #expect(await fresh.status(for: .analytics) == .denied)
        #expect(!freshPrivacy.isEnabled(.analytics))
        #expect(fresh.startupDiagnostics.isEmpty, "\(fresh.startupDiagnostics)")
        #expect(!fixture.privacy.isEnabled(.analytics))
    }

    @Test func aGrantReturnsAndAppliesOnceItIsRecorded() async throws {
        let fixture = try await Fixture()
        defer { fixture.directory.cleanUp() }
        let holder = try StoppedHolder(directory: fixture.data.url)
        defer { holder.release() }

        let call = Call { () async throws(ConsentRecordingError) in
            _ = try await fixture.consent.setStatus(.granted, for: .analytics, source: .user)
        }
        let returned = await eventually(turns: 2_000) { call.hasReturned }
        #expect(returned, "setStatus waited for the stopped process")
        guard returned else { return }
        let error = try #require(call.error)
        #expect(error.isHeld && !error.applied)
        // A grant without its record is not in force.
        #expect(!fixture.privacy.isEnabled(.analytics))
        #expect(await fixture.consent.status(for: .analytics) != .granted)

        holder.release()
        #expect(await eventually(turns: 2_000) { fixture.privacy.isEnabled(.analytics) })
        #expect(await fixture.consent.status(for: .analytics) == .granted)
        #expect(try fixture.ledger() == ["analytics granted"])
    }

    @Test func changesHeldBehindEachOtherAreRecordedInTheOrderTheyWereMade() async throws {
        let fixture = try await Fixture(granting: [.advertising])
        defer { fixture.directory.cleanUp() }
        let holder = try StoppedHolder(directory: fixture.data.url)
        defer { holder.release() }

        let call = Call { () async throws(ConsentRecordingError) in
            let consent = fixture.consent
            // A grant held, then its denial: the denial is a change of the held grant, not of what is in force.
            _ = try? await consent.setStatus(.granted, for: .analytics, source: .user)
            _ = try? await consent.setStatus(.denied, for: .analytics, source: .user)
            _ = try? await consent.denyAll(source: .user)
            _ = try await consent.setStatus(.granted, for: .advertising, source: .user)
        }
        let returned = await eventually(turns: 2_000) { call.hasReturned }
        #expect(returned, "a change waited for the stopped process")
        guard returned else { return }
        #expect(!fixture.privacy.isEnabled(.analytics))
        #expect(!fixture.privacy.isEnabled(.inAppAutomation), "the held revoke-all did not apply at once")

        holder.release()
        let expected = [
            "advertising granted", "analytics granted", "analytics denied", "advertising denied", "advertising granted",
        ]
        #expect(
            await eventually(turns: 2_000) { (try? fixture.ledger()) == expected }, "\((try? fixture.ledger()) ?? [])")
        #expect(await eventually(turns: 2_000) { fixture.privacy.isEnabled(.inAppAutomation) })
        #expect(!fixture.privacy.isEnabled(.analytics))
        let (freshPrivacy, fresh) = Fixture.start(on: fixture.data)
        #expect(await fresh.status(for: .analytics) == .denied)
        #expect(await fresh.status(for: .advertising) == .granted)
        #expect(freshPrivacy.isEnabled(.inAppAutomation) && !freshPrivacy.isEnabled(.analytics))
    }

    /// A ledger whose appends find the lock busy while `isBusy` is set, as a file ledger does past the bound.
    final class BusyLedger: ConsentLedger {
        let inner: InMemoryConsentLedger
        let isBusy = LockedValue(false)

        init(_ inner: InMemoryConsentLedger) { self.inner = inner }

        func load() throws -> ConsentLedgerContents { try inner.load() }
        func append(_ record: ConsentRecord) throws {
            if isBusy.withLock({ $0 }) {
                throw FileStoreError(path: "ledger", operation: .lock, problem: .system(EWOULDBLOCK))
            }
            try inner.append(record)
        }
        func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
    }

    @Test func whatAnotherWriterAppendsBeforeAHeldRefusalDoesNotReopenIt() async throws {
        let shared = InMemoryConsentLedger()
        let busy = BusyLedger(shared)
        func start(_ ledger: any ConsentLedger) -> (PrivacyManager, ConsentManager) {
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore(),
                consentPolicy: Self.policy)
            return (privacy, ConsentManager(privacy: privacy, ledger: ledger))
        }
        let (privacy, consent) = start(busy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        busy.isBusy.withLock { $0 = true }
        await #expect(throws: ConsentRecordingError.self) {
            try await consent.setStatus(.denied, for: .analytics, source: .user)
        }
        #expect(!privacy.isEnabled(.analytics))

        // Another writer denies and grants again meanwhile: the held refusal comes after both.
        let (_, other) = start(shared)
        try await other.setStatus(.denied, for: .analytics, source: .user)
        try await other.setStatus(.granted, for: .analytics, source: .user)
        await consent.catchUpWithLedger()
        #expect(!privacy.isEnabled(.analytics), "another writer's earlier grant reopened a held refusal")
        #expect(await consent.status(for: .analytics) == .denied)

        busy.isBusy.withLock { $0 = false }
        #expect(await eventually(turns: 2_000) { (try? shared.load().records.last?.newStatus) == .denied })
        #expect(try shared.load().records.map(\.newStatus) == [.granted, .denied, .granted, .denied])
        #expect(!privacy.isEnabled(.analytics))
        #expect(await consent.status(for: .analytics) == .denied)
    }
}
#endif
