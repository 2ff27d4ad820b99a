import FeatureGate
import FeatureGateIAB
import Foundation
import Testing

/// A clock for the refresher's settle wait: every sleeper waits until the test lets time pass.
private final class HeldClock: Sendable {
    private let sleepers = LockedValue<[CheckedContinuation<Void, Never>]>([])

    func sleep(_ duration: Duration) async {
        await withCheckedContinuation { continuation in sleepers.withLock { $0.append(continuation) } }
    }

    /// Lets every current sleeper wake.
    func advance() {
        for sleeper in sleepers.withLock({ sleepers in
            defer { sleepers = [] }; return sleepers
        }) { sleeper.resume() }
    }
}

/// Keys a test writes while counting how often a snapshot reads them.
private final class CountingCMPKeys: CMPKeyValueSource {
    private let state = LockedValue<(values: [String: CMPValue], reads: Int, readable: Bool)>(([:], 0, true))

    func set(_ values: [String: CMPValue]) { state.withLock { $0.values = values } }
    var readable: Bool {
        get { state.withLock { $0.readable } }
        set { state.withLock { $0.readable = newValue } }
    }
    var isReadable: Bool { readable }
    var snapshotsRead: Int { state.withLock { $0.reads } / CMPKey.all.count }

    func cmpValue(forKey key: String) -> CMPValue? {
        state.withLock { state in
            state.reads += 1
            return state.values[key]
        }
    }
}

/// The serial CMP refresher: notifications coalesced, keys read once written, snapshots applied whole and in order.
@Suite struct CMPRefresherTests {
    /// What a CMP writes for "analytics granted, advertising denied", in the order it writes the keys.
    static let finalAnswer: [(String, CMPValue)] = [
        (CMPKey.gdprApplies, .number(1)),
        (CMPKey.tcString, .string("CPvalid")),
        (CMPKey.purposeConsents, .string("1000000100")),
        (CMPKey.publisherConsent, .string("1000000100")),
    ]

    private func setUp() -> (ConsentManager, CountingCMPKeys, CMPRefresher, HeldClock, CMPConsentSource) {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let keys = CountingCMPKeys()
        let source = CMPConsentSource(consentManager: consent, keys: keys)
        let clock = HeldClock()
        let refresher = CMPRefresher(source: source, settle: .milliseconds(250)) { await clock.sleep($0) }
        return (consent, keys, refresher, clock, source)
    }

    private func settle(_ refresher: CMPRefresher, _ clock: HeldClock) async {
        while !refresher.isIdle {
            clock.advance()
            await Task.yield()
        }
    }

    @Test func keysWrittenOneByOneAreReadOnceAllAreWritten() async throws {
        let (consent, keys, refresher, clock, _) = setUp()
        var written: [String: CMPValue] = [:]
        for (key, value) in Self.finalAnswer {
            written[key] = value
            keys.set(written)
            refresher.keysChanged()  // UserDefaults posts a change after every write
            for _ in 0..<100 { await Task.yield() }
        }
        await settle(refresher, clock)
        #expect(keys.snapshotsRead == 1, "\(Self.finalAnswer.count) writes, one read")
        let records = try await consent.records()
        // One snapshot, applied whole: one record per category the final answer decides, nothing half-written.
        let expected = CMPConsent(keys: written).decisions.filter { $0.value != .unknown }
        #expect(Set(records.map(\.category)) == Set(expected.keys))
        #expect(records.count == expected.count, "\(records)")
        for (category, status) in expected { #expect(await consent.status(for: category) == status) }
    }

    @Test func aChangeDuringTheWaitRestartsItAndTheNewestSnapshotWins() async throws {
        let (consent, keys, refresher, clock, _) = setUp()
        for round in 0..<50 {
            let granted = round % 2 == 0
            let purposes = granted ? "1000000100" : "0000000000"
            keys.set([CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string(purposes)])
            refresher.keysChanged()
            if round % 3 == 0 { clock.advance() }
            await Task.yield()
        }
        await settle(refresher, clock)
        // The last write was round 49: nothing granted.
        #expect(await consent.status(for: .analytics) == .denied)
    }

    @Test func anIdenticalSnapshotIsSkipped() async throws {
        let (_, keys, _, _, source) = setUp()
        keys.set(Dictionary(uniqueKeysWithValues: Self.finalAnswer))
        #expect(await source.refreshIfChanged() != nil)
        #expect(await source.refreshIfChanged() == nil, "nothing changed: not applied again")
        keys.set([:])
        #expect(await source.refreshIfChanged() != nil)
    }

    @Test func manyConcurrentChangeSignalsEndWithTheLastAnswerAndNothingRunning() async throws {
        let (consent, keys, refresher, clock, _) = setUp()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<250 {
                        if task == 0 {
                            let purposes = step == 249 ? "1000000100" : (step % 2 == 0 ? "1000000100" : "0")
                            keys.set([CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string(purposes)])
                        }
                        refresher.keysChanged()
                        if step % 10 == 0 { clock.advance() }
                    }
                }
            }
        }
        await settle(refresher, clock)
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(refresher.isIdle)
    }

    @Test func keysThatCannotBeReadNowChangeNothing() async throws {
        let (consent, keys, _, _, source) = setUp()
        keys.set([CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string("1000000100")])
        await source.refresh()
        #expect(await consent.status(for: .analytics) == .granted)
        // The device locks: every key reads as absent, which must not read as "the CMP says unknown".
        keys.set([:])
        keys.readable = false
        let locked = await source.refresh()
        #expect(locked.keysWereUnreadable)
        #expect(locked.records.isEmpty)
        #expect(await source.refreshIfChanged() == nil)
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(keys.snapshotsRead == 1, "nothing read while locked")
    }

    @Test func aStoppedRefresherReadsNothing() async throws {
        let (consent, keys, refresher, clock, _) = setUp()
        refresher.stop()
        keys.set(Dictionary(uniqueKeysWithValues: Self.finalAnswer))
        refresher.keysChanged()
        clock.advance()
        #expect(refresher.isIdle)
        #expect(try await consent.records().isEmpty)
    }

    /// A refresh whose turn comes after its refresher stopped (it waited behind another) reads and applies nothing:
    /// once `stop()` (the token's cancel) returns, no refresh begins.
    @Test func aRefreshWhoseTurnComesAfterTheStopAppliesNothing() async throws {
        let (consent, keys, _, _, source) = setUp()
        keys.set(Dictionary(uniqueKeysWithValues: Self.finalAnswer))
        #expect(await source.refreshIfChanged(unless: { true }) == nil)
        #expect(keys.snapshotsRead == 0)
        #expect(try await consent.records().isEmpty)
        #expect(await source.refreshIfChanged(unless: { false }) != nil)
    }

    @Test func concurrentRefreshesApplyTheirSnapshotsInCallOrder() async throws {
        let (consent, keys, _, _, source) = setUp()
        // Each refresh reads after the previous one applied: the last call sees the last write.
        for round in 0..<200 {
            keys.set([
                CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string(round % 2 == 0 ? "1000000100" : "0"),
            ])
            Task { await source.refresh() }
        }
        keys.set([CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string("1000000100")])
        await source.refresh()
        #expect(await consent.status(for: .analytics) == .granted)
    }
}

extension CMPRefresherTests {
    @Test func keysUnreadableWhileLockedAreReadWhenProtectedDataBecomesAvailable() async throws {
        let (consent, keys, _, _, source) = setUp()
        let written = Dictionary(uniqueKeysWithValues: Self.finalAnswer)
        let expected = CMPConsent(keys: written).decisions.filter { $0.value != .unknown }
        #expect(!expected.isEmpty)
        keys.readable = false
        keys.set(written)
        #expect(await source.refresh().keysWereUnreadable)
        #expect(try await consent.records().isEmpty)
        let center = NotificationCenter()
        let token = source.refreshWhenProtectedDataBecomesAvailable(
            NotificationCenterProtectedDataAvailability(center: center))
        keys.readable = true
        center.post(name: NotificationCenterProtectedDataAvailability.protectedDataDidBecomeAvailable, object: nil)
        var waited = 0
        while try await consent.records().count < expected.count && waited < 5_000 {
            try await Task.sleep(for: .milliseconds(1))
            waited += 1
        }
        for (category, status) in expected { #expect(await consent.status(for: category) == status) }
        // Stopped: a later notification reads nothing.
        token.cancel()
        let reads = keys.snapshotsRead
        center.post(name: NotificationCenterProtectedDataAvailability.protectedDataDidBecomeAvailable, object: nil)
        try await Task.sleep(for: .milliseconds(50))
        #expect(keys.snapshotsRead == reads)
    }
}
