import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// A subsystem whose stop waits on something that never finishes unless released: an upload stuck in a hanging
/// client, or code that ignores cancellation altogether.
private final class StuckSubsystem: Subsystem {
    let name: String
    let requiredFeatures: Feature
    let storage: GatedStorage
    let stopStarted = Latch()
    let stuck: @Sendable (StopReason) async -> Void

    init(_ name: String, needs: Feature, storage: GatedStorage, stuck: @escaping @Sendable (StopReason) async -> Void) {
        self.name = name
        self.requiredFeatures = needs
        self.storage = storage
        self.stuck = stuck
    }

    func start() async throws { try storage.write(Data("queued".utf8), to: "queue.jsonl") }
    func stop(reason: StopReason) async {
        stopStarted.open()
        await stuck(reason)
    }
    func purge() async -> PurgeReport {
        do { return PurgeReport(removedFiles: try storage.purge()) } catch {
            return PurgeReport(failures: ["\(error)"])
        }
    }
}

/// A deadline clock for tests: its n-th wait ends when the n-th latch opens (a wait without a latch never ends
/// on its own), so a deadline "passes" exactly when the test says the work is stuck, however slow the machine.
private final class ScriptedDeadlines: Sendable {
    private let latches: [Latch]
    private let calls = LockedValue(0)
    init(_ latches: [Latch]) { self.latches = latches }
    var sleep: @Sendable (Duration) async -> Void {
        { [self] _ in
            let call = calls.withLock { calls in
                defer { calls += 1 }
                return calls
            }
            await (call < latches.count ? latches[call] : Latch()).wait()
        }
    }
}

/// R4: revoke-all returns within its documented bound even when a backend, an inner transport or a subsystem
/// hangs, purges all the same, and reports what it cancelled.
///
/// Its deadlines are scripted (no clock), so the time limit only catches a hang: 10 minutes, as a full sanitizer run
/// on two cores kept the shared pool busy for over a minute while three of these waited their turn (1 minute failed
/// them there, with nothing wrong; 5 minutes failed them once the crash enumeration of a deferred denial grew).
@Suite(.timeLimit(.minutes(10))) struct RevocationDeadlineTests {
    private func setUp(
        deadlines: @escaping (StuckSubsystem, HangingTransport) -> [Latch],
        stuck: @escaping @Sendable (GatedTransport, StopReason) async -> Void
    ) async -> (ConsentRevocation, MemoryStorage, HangingTransport, GatedTransport) {
        let privacy = gate(.push)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let runtime = SubsystemRuntime(privacy: privacy)
        let inner = MemoryStorage()
        let hanging = HangingTransport()
        let transport = GatedTransport(hanging, features: .push, privacy: privacy, counter: IOCounter())
        let storage = GatedStorage(inner, features: .push, privacy: privacy, counter: IOCounter())
        let subsystem = StuckSubsystem("push", needs: .push, storage: storage) { await stuck(transport, $0) }
        runtime.register(subsystem)
        runtime.start()
        await runtime.settle()
        let revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
            deadline: .milliseconds(20), sleep: ScriptedDeadlines(deadlines(subsystem, hanging)).sleep)
        return (revocation, inner, hanging, transport)
    }

    @Test func anOptOutStuckInAHangingTransportIsCancelledAndThePurgeStillRuns() async throws {
        let (revocation, storage, hanging, _) = await setUp(deadlines: { [$1.started] }) { transport, reason in
            guard case .featuresDisabled(_, let permit) = reason else { return }
            _ = try? await transport.sendExitRequest(TransportRequest(method: "POST", path: "/opt-out"), permit: permit)
        }
        #expect(storage.names == ["queue.jsonl"])
        let report = await revocation.revokeAll()
        #expect(report.cancelled == [CancelledOperation(subsystem: "push", operation: "stop")])
        #expect(storage.names.isEmpty)
        #expect(report.totalPurged.removedFiles == ["queue.jsonl"])
        #expect(report.failures.isEmpty)
        hanging.release.open()
    }

    @Test func aStopThatIgnoresCancellationIsNoLongerWaitedFor() async throws {
        let never = Latch()
        let (revocation, storage, _, _) = await setUp(deadlines: { subsystem, _ in [subsystem.stopStarted] }) { _, _ in
            await never.wait()
        }
        let report = await revocation.revokeAll()
        #expect(report.cancelled.map(\.operation) == ["stop"])
        #expect(storage.names.isEmpty, "the purge ran after the stuck stop was abandoned")
        never.open()
    }

    @Test func anErasureRequestStuckInAHangingTransportIsCancelled() async throws {
        let (revocation, _, hanging, transport) = await setUp(deadlines: { [Latch(), $1.started] }) { _, _ in }
        _ = try revocation.identifier.current()  // an identifier to erase
        let report = await revocation.revokeAll(
            erasure: ErasureRequest(via: transport) { _ in TransportRequest(method: "POST", path: "/erasure") })
        #expect(report.cancelled == [CancelledOperation(subsystem: "erasure request", operation: "send")])
        guard case .failed(let error) = report.erasure else {
            Issue.record("expected a cancelled erasure request, got \(report.erasure)")
            return
        }
        #expect(error is CancellationError)
        hanging.release.open()
    }
}
