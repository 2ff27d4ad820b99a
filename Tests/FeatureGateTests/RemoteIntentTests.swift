import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// Kill-switch payloads made durable as intents while another process held the lock (``IntentJournal``): a fresh
/// start reads them over the kept file, a fold writes them into it, crashed at any step or run twice, and a payload
/// only ever replaces the bytes it was recorded over, so an older one never overwrites a newer one.
@Suite struct RemoteIntentTests {
    /// Reads a payload as the decimal raw bits of the flags it disables.
    struct BitsInterpreter: RemotePayloadInterpreter {
        struct Invalid: Error {}
        func disables(in payload: Data) throws -> RemoteDisables {
            guard let bits = UInt(String(decoding: payload, as: UTF8.self)) else { throw Invalid() }
            return RemoteDisables(features: Feature(rawValue: bits))
        }
    }

    static func payload(_ features: Feature) -> RemoteLayerRecord {
        RemoteLayerRecord(payload: Data(String(features.rawValue).utf8), entityTag: "\"\(features.rawValue)\"")
    }

    /// A gate on `data` whose configuration enables push, analytics and messageCenter.
    static func launch(
        _ data: PrivacyDataDirectory, diagnostics: Collector<PrivacyManagerDiagnostic>? = nil
    ) -> PrivacyManager {
        var handler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?
        if let diagnostics { handler = { diagnostics.append($0) } }
        return PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.push, .analytics, .messageCenter]),
            store: FileFeatureStore(url: data.stateFile),
            remoteLayer: RemoteLayerFile(url: data.remoteLayerFile, interpreter: BitsInterpreter()),
            diagnosticHandler: handler)
    }

    /// A directory whose kept payload disables push.
    static func prepared() throws -> (TemporaryDirectory, PrivacyDataDirectory) {
        let directory = TemporaryDirectory()
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try launch(data).applyRemotePayload(payload(.push).payload)
        return (directory, data)
    }

    static func kept(_ data: PrivacyDataDirectory) -> Data {
        FileManager.default.contents(atPath: data.remoteLayerFile.path(percentEncoded: false)) ?? Data()
    }

    /// The intent replacing the kept bytes `base` with `record`.
    static func intent(over base: Data, _ record: RemoteLayerRecord) -> TakeAwayIntent {
        TakeAwayIntent(
            stateFile: nil,
            remote: .init(
                file: PrivacyDataDirectory.remoteLayerFileName, base: RemoteLayerFile.digest(of: base), record: record))
    }

    static func fold(_ data: PrivacyDataDirectory, steps: Int? = nil) -> Int {
        let budget = IntentJournal.CrashBudget(steps: steps ?? .max)
        IntentJournal.$stepsBeforeCrash.withValue(budget) {
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {}
        }
        return budget.taken
    }

    static func intentsLeft(_ data: PrivacyDataDirectory) -> Bool {
        FileManager.default.fileExists(atPath: data.url.appending(path: IntentJournal.directoryName).path())
    }

    @Test func aFoldCrashedAfterAnyStepEndsWithTheLastPayloadInForce() throws {
        let last = Self.payload([.analytics, .push])
        let lastBytes = try RemoteLayerFile.encoded(last)
        var explored = 0
        var failures: [String] = []
        for steps in 0..<32 {
            let (directory, data) = try Self.prepared()
            defer { directory.cleanUp() }
            let anchor = data.url.path(percentEncoded: false)
            // Two payloads in a row, and a disable between them: each payload recorded over what the one before
            // leaves, as a process that applies both while the lock stays busy records them.
            let first = Self.payload(.analytics)
            try IntentJournal.record(Self.intent(over: Self.kept(data), first), in: anchor)
            try IntentJournal.record(
                TakeAwayIntent(stateFile: PrivacyDataDirectory.stateFileName, disable: .messageCenter), in: anchor)
            try IntentJournal.record(
                Self.intent(over: RemoteLayerFile.encoded(first), last), in: anchor)

            let taken = Self.fold(data, steps: steps)
            explored += 1
            let crashed = Self.launch(data)
            if crashed.enabledFeatures != [] || crashed.keptRemoteLayer != last {
                failures.append("crashed after \(steps) steps: \(crashed.enabledFeatures) at the next start")
            }
            _ = Self.fold(data)
            let diagnostics = Collector<PrivacyManagerDiagnostic>()
            let after = Self.launch(data, diagnostics: diagnostics)
            if after.enabledFeatures != [] || Self.kept(data) != lastBytes {
                failures.append("crashed after \(steps) steps: \(after.enabledFeatures) after the fold")
            }
            after.enableFeatures(.messageCenter)  // Lifts the disable: the kill switch is what is left.
            if after.enabledFeatures != [.messageCenter] {
                failures.append("crashed after \(steps) steps: \(after.enabledFeatures) once messageCenter is on")
            }
            if !diagnostics.all.isEmpty { failures.append("crashed after \(steps) steps: \(diagnostics.all)") }
            if Self.intentsLeft(data) { failures.append("crashed after \(steps) steps: intents left after a fold") }
            if taken < steps { break }  // The fold finished within the budget: every crash point was explored.
        }
        #expect(explored >= 5, "only \(explored) crash points")
        #expect(failures.isEmpty, "\(failures)")
        print("RemoteIntentTests: \(explored) crash points of a fold with two payloads and a disable explored")
    }

    /// Two processes apply payloads at the same moment behind a busy lock: each records its intent over the same
    /// kept bytes. The one recorded later (the order the names carry) is in force at every start, crashed fold or
    /// not, and is what the fold keeps; never the earlier one.
    @Test func ofTwoPayloadsRecordedOverTheSameKeptOneTheLaterWinsInEveryStartAndFold() throws {
        let (earlier, later) = (Self.payload(.analytics), Self.payload(.messageCenter))
        var failures: [String] = []
        for steps in 0..<16 {
            let (directory, data) = try Self.prepared()
            defer { directory.cleanUp() }
            let anchor = data.url.path(percentEncoded: false)
            let base = Self.kept(data)
            try IntentJournal.record(Self.intent(over: base, earlier), in: anchor)
            try IntentJournal.record(Self.intent(over: base, later), in: anchor)
            if Self.launch(data).keptRemoteLayer != later { failures.append("before the fold: not the later one") }
            let taken = Self.fold(data, steps: steps)
            if Self.launch(data).keptRemoteLayer != later {
                failures.append("fold crashed after \(steps) steps: not the later one at the next start")
            }
            _ = Self.fold(data)
            if Self.kept(data) != (try RemoteLayerFile.encoded(later)) {
                failures.append("fold crashed after \(steps) steps: the file does not keep the later one")
            }
            if taken < steps { break }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func anOlderPayloadNeverOverwritesOneKeptAfterItWasRecorded() throws {
        let (directory, data) = try Self.prepared()
        defer { directory.cleanUp() }
        // Recorded over the kept file; then the lock's holder keeps a newer payload before the fold.
        try IntentJournal.record(
            Self.intent(over: Self.kept(data), Self.payload(.analytics)), in: data.url.path(percentEncoded: false))
        let newer = Self.payload(.messageCenter)
        try FileManager.default.removeItem(at: data.remoteLayerFile)
        #expect(
            FileManager.default.createFile(
                atPath: data.remoteLayerFile.path(), contents: try RemoteLayerFile.encoded(newer)))

        #expect(Self.launch(data).keptRemoteLayer == newer)
        _ = Self.fold(data)
        #expect(Self.kept(data) == (try RemoteLayerFile.encoded(newer)))
        #expect(!Self.intentsLeft(data))
        #expect(Self.launch(data).enabledFeatures == [.push, .analytics])
    }

    @Test func foldingAgainChangesNothingEvenWhenAPayloadComesBack() throws {
        let (a, b) = (Self.payload(.push), Self.payload(.analytics))
        let start = try RemoteLayerFile.encoded(a)
        // a → b → a: the last intent's bytes equal the first one's base.
        let intents = [
            Self.intent(over: start, b).remote!, Self.intent(over: try RemoteLayerFile.encoded(b), a).remote!,
        ]
        let once = RemoteLayerFile.folding(intents, over: start)
        #expect(once == start)
        #expect(RemoteLayerFile.folding(intents, over: once) == once)
        #expect(RemoteLayerFile.folding(Array(intents.prefix(1)), over: start) == (try RemoteLayerFile.encoded(b)))
        // Over bytes neither was recorded over, nothing changes.
        let other = try RemoteLayerFile.encoded(Self.payload(.messageCenter))
        #expect(RemoteLayerFile.folding(intents, over: other) == other)
        // No file at all is the base of no bytes.
        #expect(
            RemoteLayerFile.folding([Self.intent(over: Data(), b).remote!], over: Data())
                == (try RemoteLayerFile.encoded(b)))
    }

    /// Writes an intent file as a newer version of the package would, named to sort at `order`.
    static func writeNewerIntent(in data: PrivacyDataDirectory, order: String) throws {
        let folder = data.url.appending(path: IntentJournal.directoryName)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = #"{"version":2,"stateFile":"featuregate-state.json","disable":0,"takeAwayOfTheFuture":[1]}"#
        #expect(
            FileManager.default.createFile(
                atPath: folder.appending(path: "\(order)-0000000001-00000001.intent").path(), contents: Data(text.utf8))
        )
    }

    @Test func anIntentOfANewerVersionHoldsEveryFlagOffAndIsLeftForThatVersion() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let gate = Self.launch(data)
        gate.disableFeatures(.analytics)
        let stored = try #require(try FileFeatureStore(url: data.stateFile).load())
        let anchor = data.url.path(percentEncoded: false)
        // One readable intent before it, one after it.
        try IntentJournal.record(
            TakeAwayIntent(stateFile: PrivacyDataDirectory.stateFileName, disable: .messageCenter), in: anchor)
        // Named by the clock, as the package names them: after the first, before the next.
        let now = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
        let order = String(repeating: "0", count: 20 - String(now).count) + String(now)
        try Self.writeNewerIntent(in: data, order: order)
        try? await Task.sleep(for: .milliseconds(2))
        try IntentJournal.record(
            TakeAwayIntent(stateFile: PrivacyDataDirectory.stateFileName, disable: .push), in: anchor)
        let names = try FileManager.default.contentsOfDirectory(atPath: anchor + "/" + IntentJournal.directoryName)
        #expect(names.count == 3)

        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let next = Self.launch(data, diagnostics: diagnostics)
        #expect(next.enabledFeatures == [])
        #expect(next.isHoldingWrites)
        let named = diagnostics.all.contains {
            guard case .storeUnreadableWritesHeld(_, let error) = $0,
                case .unsupportedIntentVersion(let file, found: 2, supported: 1)? =
                    error as? PrivacyManagerDiagnostic.StoredStateError
            else { return false }
            return file.hasSuffix("\(order)-0000000001-00000001.intent")
        }
        #expect(named, "\(diagnostics.all)")

        // A fold takes the one before it, and leaves it and every later one.
        _ = Self.fold(data)
        let left = try FileManager.default.contentsOfDirectory(atPath: anchor + "/" + IntentJournal.directoryName)
        #expect(left.count == 2 && left.contains { $0.hasPrefix(order) })
        let folded = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(folded.decidedFeatures.contains(.messageCenter) && !folded.enabledFeatures.contains(.messageCenter))
        #expect(!folded.decidedFeatures.contains(.push), "an intent after the newer one was folded before it")
        #expect(stored != (try FileFeatureStore(url: data.stateFile).load()))

        // Its changes stay held (nothing the user chose is overwritten) until that version folds it.
        next.enableFeatures(.messageCenter)
        #expect(next.retryHeldStore())
        #expect(next.isEnabled(.messageCenter) && !next.isEnabled(.push))
        let unchanged = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(unchanged == folded)
    }
}

/// A kill-switch payload applied on a simulated disk (``SimulatedDisk``), with the lock free and with another process
/// stopped holding it, crashed after every durable step in every way a power loss could leave the disk: a fresh start
/// finds the old payload or the new one, never neither, and the new one once the call returned; the lock's next
/// holder leaves the same in the file.
@Suite struct SimulatedKillSwitchCrashTests {
    static let anchor = "/simulated/data"
    static var data: PrivacyDataDirectory {
        PrivacyDataDirectory(url: URL(filePath: anchor, directoryHint: .isDirectory))
    }
    static let (old, new) = (RemoteIntentTests.payload(.push), RemoteIntentTests.payload(.analytics))

    /// What a fresh start on `disk` keeps in force, and what the lock's next holder leaves in force.
    static func start(on disk: SimulatedDisk) -> (start: String, folded: String) {
        disk.waitsForLocks = true
        return FileSystem.$current.withValue(disk.process()) {
            let diagnostics = Collector<PrivacyManagerDiagnostic>()
            let seen = Self.seen(RemoteIntentTests.launch(data, diagnostics: diagnostics), diagnostics)
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: .seconds(5)) {}
            let after = Collector<PrivacyManagerDiagnostic>()
            return (seen, Self.seen(RemoteIntentTests.launch(data, diagnostics: after), after))
        }
    }

    /// `old`, `new`, or what else `gate` shows.
    static func seen(_ gate: PrivacyManager, _ diagnostics: Collector<PrivacyManagerDiagnostic>) -> String {
        let expected: [(String, RemoteLayerRecord, Feature)] = [
            ("old", old, [.analytics, .messageCenter]), ("new", new, [.push, .messageCenter]),
        ]
        for (name, record, enabled) in expected
        where gate.keptRemoteLayer?.payload == record.payload && gate.enabledFeatures == enabled
            && diagnostics.all.isEmpty
        {
            return name
        }
        return "\(gate.enabledFeatures), kept \(String(describing: gate.keptRemoteLayer)), \(diagnostics.all)"
    }

    @Test(arguments: [false, true])
    func aCrashAtEveryDurableStepKeepsTheOldPayloadOrTheNewOneAndTheNewOneOnceItsCallReturned(held: Bool) async {
        let disk = SimulatedDisk(directories: [Self.anchor])
        FileSystem.$current.withValue(disk.process()) {
            _ = try? RemoteIntentTests.launch(Self.data).applyRemotePayload(Self.old.payload)
        }
        disk.syncEverything()
        let process = disk.process()
        let gate = FileSystem.$current.withValue(process) { RemoteIntentTests.launch(Self.data) }
        if held { disk.holdLockOutside(Self.anchor + "/" + AtomicFile.lockFileName) }
        disk.startRecording()
        await SimulatedCrashEnumerationTests.Call.blocking { _ = try? gate.applyRemotePayload(Self.new.payload) }
            .make(as: process)
        let steps = disk.stopRecording()
        #expect(steps.count > 1, "the payload wrote nothing")
        var explored = 0
        var failures: [String] = []
        for (index, state) in steps.enumerated() {
            let returned = index == steps.count - 1
            for (label, crashed) in SimulatedDisk.crashStates(of: state) {
                explored += 1
                let (start, folded) = Self.start(on: SimulatedDisk(state: crashed))
                let allowed = returned ? ["new"] : ["old", "new"]
                if !allowed.contains(start) || folded != start {
                    failures.append("step \(index) of \(steps.count - 1), \(label): start \(start), folded \(folded)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(explored) crash states: \(failures.prefix(8))")
        print(
            "SimulatedKillSwitchCrashTests: lock \(held ? "held" : "free"): \(steps.count - 1) durable steps, \(explored) crash states explored"
        )
    }
}
