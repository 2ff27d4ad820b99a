import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// The consent reference model's processes: two processes (two complete stacks: gate, consent, runtime,
/// revocation) on one data directory, whose operations may be killed at any of their I/O points, and which are
/// relaunched as an operation of their own. Seeded random sequences; a failure prints its seed
/// (`FEATUREGATE_MODEL_SEED` replays it from there).
///
/// The model keeps only what must hold whatever the interleaving:
/// - a denial holds: a category denied (or revoked) by an acknowledged operation of either process, and not
///   granted since by an operation that may have happened, reads as denied after any relaunch, its features off;
/// - no record is lost: every acknowledged ledger append is in the ledger after any relaunch;
/// - a revocation that began finishes: once a relaunch has run, no pending revocation is left, every category
///   reads denied unless granted since, and every erasure a pending revocation owed reached the server with its key.
///
/// A kill is modeled at an I/O point: from the chosen one on, the process's store, ledger and transport throw
/// instead of touching anything, so the files hold exactly what the I/O before the kill wrote.
@Suite struct ProcessModelTests {
    /// 60 sequences by default (each step writes and flushes real files); `FEATUREGATE_MODEL_SEQUENCES`, which
    /// sets the other model tests' count, sets a fifth of it here (30 in the ThreadSanitizer pass).
    static let sequences =
        Int(ProcessInfo.processInfo.environment["FEATUREGATE_MODEL_SEQUENCES"] ?? "").map {
            max(1, $0 / 5)
        } ?? 60
    static let stepsPerSequence = 24
    static let categories: [ConsentCategory] = [.analytics, .advertising]

    struct Killed: Error {}

    /// One process lifetime's I/O: counts it, and from the kill point on refuses it.
    final class ProcessIO: Sendable {
        private let state = LockedValue<(budget: Int?, dead: Bool)>((nil, false))
        var isDead: Bool { state.withLock { $0.dead } }
        func killAfter(_ count: Int?) { state.withLock { $0.budget = count } }
        func perform() throws {
            try state.withLock { state in
                if state.dead { throw Killed() }
                guard let budget = state.budget else { return }
                if budget == 0 {
                    state.dead = true
                    throw Killed()
                }
                state.budget = budget - 1
            }
        }
    }

    struct DyingStore: FeatureStore {
        let inner: FileFeatureStore
        let io: ProcessIO
        func load() throws -> Data? {
            try io.perform()
            return try inner.load()
        }
        func save(_ record: Data) throws {
            try io.perform()
            try inner.save(record)
        }
        func remove() throws {
            try io.perform()
            try inner.remove()
        }
        func update(_ transform: (Data?) -> Data?) throws {
            try io.perform()
            try inner.update(transform)
        }
    }

    struct DyingLedger: ConsentLedger {
        let inner: FileConsentLedger
        let io: ProcessIO
        func load() throws -> ConsentLedgerContents {
            try io.perform()
            return try inner.load()
        }
        func append(_ record: ConsentRecord) throws {
            try io.perform()
            try inner.append(record)
        }
        func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
    }

    /// The server: the idempotency keys of the erasure requests it received.
    struct DyingTransport: Transport {
        let io: ProcessIO
        let server: Collector<String>
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            try io.perform()
            server.append(request.headers[ErasureRequest.idempotencyKeyHeader] ?? "no key")
            return TransportResponse(statusCode: 200)
        }
    }

    /// One launch of one process.
    final class Process: Sendable {
        let io = ProcessIO()
        let privacy: PrivacyManager
        let consent: ConsentManager
        let runtime: SubsystemRuntime
        let revocation: ConsentRevocation
        let erasure: ErasureRequest
        let ledger: FileConsentLedger

        init(directory: PrivacyDataDirectory, server: Collector<String>) {
            ledger = FileConsentLedger(url: directory.consentLedgerFile)
            privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []),
                store: DyingStore(inner: FileFeatureStore(url: directory.stateFile), io: io),
                consentPolicy: .default)
            consent = ConsentManager(privacy: privacy, ledger: DyingLedger(inner: ledger, io: io))
            runtime = SubsystemRuntime(privacy: privacy)
            runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: Collector()))
            revocation = ConsentRevocation(
                consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
                deadline: unhurriedDeadline)
            erasure = ErasureRequest(
                via: GatedTransport(
                    DyingTransport(io: io, server: server), features: .analytics, privacy: privacy, counter: IOCounter()
                )
            ) { _ in TransportRequest(method: "POST", path: "/erasure") }
        }
    }

    enum Operation: CustomStringConvertible {
        case grant(Int, ConsentCategory)
        case deny(Int, ConsentCategory)
        case enable(Int, Feature)
        case append(Int)
        case revoke(Int)
        case relaunch(Int)

        var process: Int {
            switch self {
            case .grant(let p, _), .deny(let p, _), .enable(let p, _), .append(let p), .revoke(let p),
                .relaunch(let p):
                p
            }
        }

        var description: String {
            switch self {
            case .grant(let p, let c): "P\(p) grant \(c)"
            case .deny(let p, let c): "P\(p) deny \(c)"
            case .enable(let p, let f): "P\(p) enable \(f)"
            case .append(let p): "P\(p) append"
            case .revoke(let p): "P\(p) revoke-all"
            case .relaunch(let p): "P\(p) relaunch"
            }
        }

        static func random(using random: inout SeededGenerator) -> Operation {
            let p = Int.random(in: 0..<2, using: &random)
            let category = categories.randomElement(using: &random)!
            switch Int.random(in: 0..<12, using: &random) {
            case 0..<3: return .grant(p, category)
            case 3..<5: return .deny(p, category)
            case 5: return .enable(p, [.push, .analytics].randomElement(using: &random)!)
            case 6..<8: return .append(p)
            case 8..<10: return .revoke(p)
            default: return .relaunch(p)
            }
        }
    }

    /// What must hold, whatever the interleaving.
    struct Model {
        var mustBeDenied: Set<ConsentCategory> = []
        var appended: Set<Int> = []
        var owedKeys: Set<String> = []
        var nextID = 1_000
    }

    @Test func twoProcessesWithKillsAndRelaunchesKeepDenialsRecordsAndRevocations() async throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["FEATUREGATE_MODEL_SEED"] ?? "") ?? 0x5EED_0017
        var kills = 0
        var revocationsResumed = 0
        for offset in 0..<UInt64(Self.sequences) {
            let seed = baseSeed &+ offset
            let outcome = try await Self.run(seed: seed)
            kills += outcome.kills
            revocationsResumed += outcome.resumed
            if !outcome.failures.isEmpty {
                Issue.record("seed \(seed): \(outcome.failures.joined(separator: "; "))\n\(outcome.trace)")
                return
            }
        }
        // The sequences reach what they are about: kills, and revocations a relaunch had to finish.
        #expect(kills > Self.sequences)
        #expect(revocationsResumed > 0)
    }

    static func run(seed: UInt64) async throws -> (failures: [String], trace: String, kills: Int, resumed: Int) {
        let root = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-process-model-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = PrivacyDataDirectory(url: root)
        let server = Collector<String>()
        var random = SeededGenerator(seed: seed)
        var model = Model()
        var processes = [Process(directory: directory, server: server), Process(directory: directory, server: server)]
        var failures: [String] = []
        var trace: [String] = []
        var kills = 0
        var resumed = 0

        /// A fresh launch of process `p`: finishes what is pending, then checks what must hold.
        func relaunch(_ p: Int) async {
            let process = Process(directory: directory, server: server)
            processes[p] = process
            process.runtime.start()
            let report = await process.revocation.finishPendingRevocation(erasure: process.erasure)
            if report != nil { resumed += 1 }
            if let pending = process.privacy.pendingRevocation {
                failures.append("a pending revocation survived a relaunch: \(pending)")
            }
            model.owedKeys.subtract(server.all)
            if !model.owedKeys.isEmpty { failures.append("erasures never sent: \(model.owedKeys.sorted())") }
            for category in model.mustBeDenied where await process.consent.status(for: category) != .denied {
                failures.append("\(category): denied, reads \(await process.consent.status(for: category))")
            }
            for category in model.mustBeDenied {
                let features = ConsentPolicy.default.features[category] ?? []
                if process.privacy.isAnyEnabled(features) { failures.append("\(category) denied, \(features) on") }
            }
            let ids = Set(((try? process.ledger.load().records) ?? []).map(\.policyVersion))
            if !model.appended.isSubset(of: ids) {
                failures.append("records lost: \(model.appended.subtracting(ids).sorted())")
            }
        }

        for _ in 0..<stepsPerSequence {
            let operation = Operation.random(using: &random)
            let p = operation.process
            if case .relaunch = operation {
                trace.append("\(operation)")
                await relaunch(p)
                continue
            }
            if processes[p].io.isDead { await relaunch(p) }
            let killAt = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 0..<4, using: &random) : nil
            trace.append("\(operation)" + (killAt.map { " killed after \($0) I/O" } ?? ""))
            let process = processes[p]
            let wasEnabled = process.privacy.reasons().contains(where: \.isLocallyEnabled)
            // The SDK uploaded under its identifier, which exists while something is in force: the erasure names it.
            // With none (everything locally on was withheld), there is nothing to erase, and nothing is owed.
            let hadIdentifier = (try? process.revocation.identifier.current()) != nil
            let sentBefore = server.all.count
            process.io.killAfter(killAt)
            var id: Int?
            var recorded = false
            switch operation {
            case .grant(_, let category):
                _ = try? await process.consent.setStatus(
                    ConsentStatus.granted, for: category, source: ConsentSource.user)
            case .deny(_, let category):
                // A denial its process already shows changes nothing there, so it records nothing: whether another
                // process's grant reached this one first is the file watch's business, not this model's.
                recorded =
                    (try? await process.consent.setStatus(
                        ConsentStatus.denied, for: category, source: ConsentSource.user)) != nil
            case .enable(_, let features): process.privacy.enableFeatures(features)
            case .append:
                model.nextID += 1
                id = model.nextID
                do {
                    try process.io.perform()
                    try process.ledger.append(
                        ConsentRecord(
                            category: ConsentCategory("model-append"), previousStatus: .unknown, newStatus: .granted,
                            time: Date(),
                            policyVersion: model.nextID, source: .user))
                } catch {}
            case .revoke: _ = await process.revocation.revokeAll(erasure: process.erasure)
            case .relaunch: break
            }
            let killed = process.io.isDead
            process.io.killAfter(nil)
            if killed { kills += 1 }
            // What the files say now: a revocation that recorded itself must finish, and owes its erasure.
            let stored = FileManager.default.contents(atPath: directory.stateFile.path(percentEncoded: false))
            let pending = stored.flatMap { try? FeatureStateRecord(decoding: $0).pendingRevocation }
            // (An erasure that would name no install, with nothing sent, is owed nothing: there is nothing to erase.)
            if let pending, pending.isErasureOwed, pending.anonymousIdentifier != nil {
                model.owedKeys.insert(pending.requestKey.uuidString)
            }
            switch operation {
            case .grant(_, let category):
                // Acknowledged or in flight, it may have happened.
                model.mustBeDenied.remove(category)
            case .deny(_, let category) where !killed && recorded: model.mustBeDenied.insert(category)
            case .revoke where (killAt ?? 1) >= 1:
                // Its first I/O is the write that records it: past that, it began, and must finish.
                model.mustBeDenied.formUnion(categories)
                if wasEnabled && hadIdentifier && pending == nil && server.all.count == sentBefore {
                    failures.append(
                        "a revocation began with something enabled, and its erasure is neither sent nor owed")
                }
            case .append where !killed: model.appended.insert(id ?? 0)
            default: break
            }
            if !failures.isEmpty { break }
        }
        if failures.isEmpty {
            await relaunch(0)
            await relaunch(1)
        }
        return (failures, trace.joined(separator: "\n"), kills, resumed)
    }
}
