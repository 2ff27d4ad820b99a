// A child process for FeatureGateTests' killed-writer test. It saves to a file store in a loop until it is
// killed, printing one line after the first save so the parent knows the loop is running.
//
//   feature-store-writer manager PATH     toggle features through a PrivacyManager backed by PATH
//   feature-store-writer blob PATH SIZE   save SIZE-byte records of one repeated byte, alternating A and B
//   feature-store-writer ledger PATH      append consent records to a FileConsentLedger at PATH
//   feature-store-writer share DIR TAG SEED OPERATIONS BASE
//                                         one of several processes sharing the data directory DIR (see below)
//   feature-store-writer revoke DIR SERVER K / relaunch DIR SERVER
//                                         revoke-all killed at point K, then the next launch (see Revocation.swift)
//   feature-store-writer set DIR ENABLE DISABLE
//                                         one change of built-in flags (raw bits) through a PrivacyManager on DIR
//                                         whose configuration enables every flag
//   feature-store-writer consent DIR granted|denied
//                                         the analytics category (mapping .analytics) set through a ConsentManager
//   feature-store-writer hold DIR TEMPORARY
//                                         takes DIR's inter-process lock and keeps it until killed (the test stops it
//                                         with SIGSTOP meanwhile); with TEMPORARY 1 it also leaves a temporary file of
//                                         an interrupted write in DIR, as a writer killed mid-save does
//   feature-store-writer probe DIR           times start-up, a disable and reasons() on DIR (see Hold.swift)
//   feature-store-writer consent-probe DIR   times consent changes on DIR while its lock is held (see Hold.swift)
//   feature-store-writer burst DIR SEED COUNT  COUNT random consent and push changes on DIR (see Hold.swift)
//   feature-store-writer storage DIR TAG COUNT
//                                         COUNT whole-file writes to a FileStorage at DIR (names tTAG/n0...n7, each
//                                         4,096 copies of one byte), a purge of the whole storage every 16th
//   feature-store-writer takeaway DIR KIND  one take-away while DIR's lock is held elsewhere (see TakeAway.swift)
//   feature-store-writer relative DIR     with DIR as the current directory, one save to the relative path
//                                         rel/dir/features.json (a test changing its own current directory would
//                                         race every other test that starts a process)
import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport

let arguments = CommandLine.arguments
// `share`: OPERATIONS seeded random operations on DIR's gate state and ledger, by a process whose catalog knows
// only its own four flags (bits 16 + 4 TAG ...) and whose policy only its own four refusal-only categories
// (`pTAGcK`). Before each operation it prints what it is about to do, after it `ok`, then `done` at the end:
//   flags BITS        the own flags set to BITS (updateFeatures)
//   consent K STATUS  category K set to STATUS (granted or denied) through a ConsentManager (ledger + gate state)
//   append ID         a record appended to the ledger directly, its policy version ID (BASE + n)
func share(directory: URL, tag: Int, seed: UInt64, operations: Int, base: Int) async throws {
    var catalog = FeatureCatalog.builtIn
    let own = (0..<4).map { Feature.custom(bit: 16 + 4 * tag + $0) }
    for (index, flag) in own.enumerated() { catalog = try catalog.registering("p\(tag)f\(index)", as: flag) }
    let categories = (0..<4).map { ConsentCategory("p\(tag)c\($0)") }
    let policy = ConsentPolicy(version: 1, features: Dictionary(uniqueKeysWithValues: categories.map { ($0, []) }))
    let data = PrivacyDataDirectory(url: directory)
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
        catalog: catalog, consentPolicy: policy)
    let ledger = FileConsentLedger(url: data.consentLedgerFile)
    let consent = ConsentManager(privacy: privacy, ledger: ledger)
    var random = SeededGenerator(seed: seed)
    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    for index in 0..<operations {
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let bits = UInt.random(in: 0..<16, using: &random)
            let on = Feature(rawValue: bits << (16 + 4 * tag))
            say("flags \(bits)")
            privacy.updateFeatures(enable: on, disable: Feature(own).subtracting(on))
        case 1:
            let category = Int.random(in: 0..<4, using: &random)
            let status: ConsentStatus = Bool.random(using: &random) ? .granted : .denied
            say("consent \(category) \(status == .granted ? "granted" : "denied")")
            try await setAndRecord(consent, status, for: categories[category])
        default:
            let id = base + index
            say("append \(id)")
            try ledger.append(
                ConsentRecord(
                    category: .analytics, previousStatus: .unknown, newStatus: .granted, time: Date(),
                    policyVersion: id, source: .user))
        }
        // Acknowledged once saved: a save another process's lock held past the bound is retried in the background.
        while privacy.isHoldingWrites { usleep(1_000) }
        say("ok")
    }
    // Flushed before it exits: a last take-away is otherwise a pending change (issue 47, item 1), which every start
    // reads but which the other processes running now see only once a holder of the lock folds it.
    _ = await privacy.synchronize()
    say("done")
}

guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: feature-store-writer manager|blob|ledger PATH [SIZE]\n".utf8))
    exit(2)
}
let store = FileFeatureStore(url: URL(filePath: arguments[2]))
nonisolated(unsafe) var announced = false  // single-threaded program
func announce() {
    guard !announced else { return }
    announced = true
    FileHandle.standardOutput.write(Data("saving\n".utf8))
}

switch arguments[1] {
case "manager":
    let manager = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: store)
    while true {
        manager.enableFeatures([.analytics, .push])
        announce()
        manager.disableFeatures(.push)
        manager.enabledFeatures = .all
        manager.enabledFeatures = []
    }
case "blob":
    let size = arguments.count > 3 ? Int(arguments[3]) ?? 65_536 : 65_536
    let records = [Data(repeating: UInt8(ascii: "A"), count: size), Data(repeating: UInt8(ascii: "B"), count: size)]
    var index = 0
    while true {
        try store.save(records[index])
        announce()
        index ^= 1
    }
case "ledger":
    let ledger = FileConsentLedger(url: URL(filePath: arguments[2]))
    var status = ConsentStatus.granted
    while true {
        try ledger.append(
            ConsentRecord(
                category: .analytics,
                previousStatus: status == .granted ? .denied : .granted,
                newStatus: status,
                time: Date(),
                policyVersion: 1,
                source: .user
            )
        )
        announce()
        status = status == .granted ? .denied : .granted
    }
case "set" where arguments.count == 5:
    guard let enable = UInt(arguments[3]), let disable = UInt(arguments[4]) else { exit(2) }
    let data = PrivacyDataDirectory(url: URL(filePath: arguments[2]))
    // Everything on unless decided: a first disable is a change, so it is saved.
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: .all), store: FileFeatureStore(url: data.stateFile))
    privacy.updateFeatures(enable: Feature(rawValue: enable), disable: Feature(rawValue: disable))
    // A disable's save is made off the caller's thread: a process about to exit waits for it.
    _ = await privacy.synchronize()
case "consent" where arguments.count == 4:
    let data = PrivacyDataDirectory(url: URL(filePath: arguments[2]))
    let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
        consentPolicy: policy)
    let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
    try await setAndRecord(consent, arguments[3] == "granted" ? .granted : .denied, for: .analytics)
case "hold" where arguments.count == 4:
    holdLock(directory: URL(filePath: arguments[2]), leavingTemporary: arguments[3] == "1")
case "probe" where arguments.count == 3:
    probe(directory: URL(filePath: arguments[2]))
case "consent-probe" where arguments.count == 3:
    await consentProbe(directory: URL(filePath: arguments[2]))
case "burst" where arguments.count == 5:
    guard let seed = UInt64(arguments[3]), let count = Int(arguments[4]) else { exit(2) }
    try await burst(directory: URL(filePath: arguments[2]), seed: seed, count: count)
case "storage" where arguments.count == 5:
    guard let tag = UInt8(arguments[3]), let count = Int(arguments[4]) else { exit(2) }
    let storage = FileStorage(directory: URL(filePath: arguments[2]))
    for index in 0..<count {
        // A write or purge gives up after 100 ms behind another process's lock: an SDK tries it again.
        while true {
            do {
                if index % 16 == 15 {
                    _ = try storage.removeAll()
                } else {
                    let byte = UInt8(ascii: "A") &+ UInt8(index % 26)
                    try storage.write(Data(repeating: byte, count: 4_096), to: "t\(tag)/n\(index % 8)")
                }
                break
            } catch  where AtomicFile.isLockBusy(error) {
                continue
            } catch let FileStorageError.notAllRemoved(_, failures) where failures.allSatisfy(AtomicFile.isLockBusy) {
                continue
            }
        }
    }
case "share" where arguments.count == 7:
    guard let tag = Int(arguments[3]), (0..<4).contains(tag), let seed = UInt64(arguments[4]),
        let operations = Int(arguments[5]), let base = Int(arguments[6])
    else { exit(2) }
    try await share(directory: URL(filePath: arguments[2]), tag: tag, seed: seed, operations: operations, base: base)
case "revoke" where arguments.count == 5:
    guard let point = Int(arguments[4]) else { exit(2) }
    try await revokeWithKill(
        directory: URL(filePath: arguments[2]), server: URL(filePath: arguments[3]), killPoint: point)
case "relaunch" where arguments.count == 4:
    await relaunch(directory: URL(filePath: arguments[2]), server: URL(filePath: arguments[3]))
case "takeaway" where arguments.count == 4:
    await takeAway(directory: URL(filePath: arguments[2]), kind: arguments[3])
case "relative" where arguments.count == 3:
    guard FileManager.default.changeCurrentDirectoryPath(arguments[2]) else { exit(3) }
    try FileFeatureStore(url: URL(filePath: "rel/dir/features.json")).save(Data("x".utf8))
default:
    exit(2)
}
