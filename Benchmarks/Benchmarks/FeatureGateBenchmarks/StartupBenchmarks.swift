import Benchmark
import FeatureGate
import FeatureGateConfig
import Foundation

/// Benchmark 7: an app's start-up with consent, and one consent change.
///
/// `Startup.full-vs-bare` times, in paired samples (``PairedSample``), `startup`: `ConfigReader().read(contentsOf:)` of
/// the JSON form of `Examples/Configs/AirshipConfig.plist`, a `PrivacyManager` over a `FileFeatureStore` holding a
/// version 2 gate state, and a `ConsentManager` over a `FileConsentLedger` of 1,000 records (policy version 2, so the
/// grants under version 1 go stale, and stored refusals to merge); and `bare`: reading the same three files and
/// decoding each with `JSONDecoder` into plain `Codable` structs (the config's two keys, the state's fields, every
/// ledger line's fields with its time left a string). The budget is start-up ≤ 2 × bare (`report.py`).
///
/// `Consent.setStatus.file` is one consent change on that start-up's managers: analytics granted or denied in turn,
/// appended to the file ledger (one line with `fsync`, and its checkpoint), applied to the gate and saved.
/// Reported, not budgeted: its time is mostly the disk's.
func registerStartupBenchmarks() {
    let files = StartupFiles.make()
    let pair = PairedSample(first: "startup", second: "bare")
    Benchmark("Startup.full-vs-bare", configuration: .reported(calls: .one, extraMetrics: pair.metrics)) { benchmark in
        var privacy: PrivacyManager?
        var consent: ConsentManager?
        var bare: (config: PlainConfig, state: PlainState, ledger: [PlainLedgerLine])?
        pair.measure(
            in: benchmark,
            {
                guard let configuration = try? ConfigReader().read(contentsOf: files.config).configuration else {
                    return
                }
                let manager = PrivacyManager(configuration: configuration, store: FileFeatureStore(url: files.state))
                consent = ConsentManager(
                    privacy: manager, policy: StartupFiles.policy, ledger: FileConsentLedger(url: files.ledger))
                privacy = manager
            },
            { bare = try? StartupFiles.bareDecode(files) }
        )
        // The stored state decided analytics on; the ledger's last analytics grant is stale under version 2, so
        // consent withholds it. Push comes from the configuration.
        if privacy?.enabledFeatures != [.push, .inAppAutomation, .messageCenter] || consent == nil {
            benchmark.error("unexpected start-up: \(String(describing: privacy?.reasons()))")
        }
        if bare?.ledger.count != StartupFiles.ledgerRecords {
            benchmark.error("the bare decode read \(bare?.ledger.count ?? 0) ledger lines")
        }
    }

    Benchmark(
        "Consent.setStatus.file",
        configuration: .reported(calls: .one),
        closure: { benchmark async in
            let directory = StartupFiles.make()
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: directory.state))
            let consent = ConsentManager(
                privacy: privacy, policy: StartupFiles.policy, ledger: FileConsentLedger(url: directory.ledger))
            benchmark.startMeasurement()
            for iteration in benchmark.scaledIterations {
                let status: ConsentStatus = iteration.isMultiple(of: 2) ? .granted : .denied
                _ = try? await consent.setStatus(status, for: .analytics, source: .user)
            }
            benchmark.stopMeasurement()
            if await consent.status(for: .analytics) == .unknown {
                benchmark.error("no consent change was applied")
            }
        }
    )
}

/// The three files an app reads at start-up, in a fresh temporary directory.
private struct StartupFiles {
    static let ledgerRecords = 1_000
    static let policy = ConsentPolicy(version: 2, features: ConsentPolicy.default.features)

    let config: URL
    let state: URL
    let ledger: URL

    static func make() -> StartupFiles {
        let directory = URL(filePath: NSTemporaryDirectory())
            .appending(path: "featuregate-startup-\(UUID().uuidString)", directoryHint: .isDirectory)
        let files = StartupFiles(
            config: directory.appending(path: "AirshipConfig.json"),
            state: directory.appending(path: PrivacyDataDirectory.stateFileName),
            ledger: directory.appending(path: PrivacyDataDirectory.consentLedgerFileName)
        )
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try ConfigSample.convert(ConfigSample.airshipConfigXML(), to: .json).write(to: files.config)
            // The gate state file as the package writes it (the record type is the package's own): analytics
            // (1 << 4) and contacts (1 << 6) decided, analytics on, third-party sharing refused.
            let record = #"""
                {"decidedFeatures":80,"deniedConsentCategories":["thirdPartySharing"],"enabledFeatures":16,"version":2}
                """#
            try Data(record.utf8).write(to: files.state)
            // Build the trail in memory and write it once: 1,000 appends to a file would flush it 1,000 times.
            let trail = InMemoryConsentLedger()
            let categories: [ConsentCategory] = [.analytics, .advertising, .thirdPartySharing]
            var previous: [ConsentCategory: ConsentStatus] = [:]
            for index in 0..<ledgerRecords {
                let category = categories[index % categories.count]
                let status: ConsentStatus = category == .thirdPartySharing || index % 7 == 0 ? .denied : .granted
                try trail.append(
                    ConsentRecord(
                        category: category, previousStatus: previous[category] ?? .unknown, newStatus: status,
                        time: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)), policyVersion: 1,
                        source: .user))
                previous[category] = status
            }
            try trail.exportJSONLines().write(to: files.ledger)
        } catch {
            fatalError("cannot write the start-up files: \(error)")
        }
        return files
    }

    static func bareDecode(_ files: StartupFiles) throws -> (PlainConfig, PlainState, [PlainLedgerLine]) {
        let decoder = JSONDecoder()
        let config = try decoder.decode(PlainConfig.self, from: Data(contentsOf: files.config))
        let state = try decoder.decode(PlainState.self, from: Data(contentsOf: files.state))
        let lines = try Data(contentsOf: files.ledger).split(separator: UInt8(ascii: "\n"))
        return (config, state, try lines.map { try decoder.decode(PlainLedgerLine.self, from: $0) })
    }
}

/// The gate state's fields, no validation.
private struct PlainState: Codable {
    var version: Int
    var enabledFeatures: UInt
    var decidedFeatures: UInt
    var deniedConsentCategories: [String]
}

/// A ledger line's fields, the time left a string.
private struct PlainLedgerLine: Codable {
    var v: Int
    var category: String
    var previousStatus: String
    var newStatus: String
    var time: String
    var policyVersion: Int
    var source: String
}
