import Benchmark
import FeatureGate
import Foundation
import Synchronization

/// Issue 17, part 5: the ledger grows without getting slower. A launch and one consent change over a data directory
/// whose consent ledger holds 10, 1,000 or 100,000 records, as `FileConsentLedger` leaves it (the JSON Lines and their
/// checkpoint).
///
/// - `Ledger.launch.N`: a `PrivacyManager` over the directory's `FileFeatureStore` (a stored gate state) and a
///   `ConsentManager` over its `FileConsentLedger`: what an app does at every launch. Nothing is written.
/// - `Ledger.verify.N`: the check of the checkpoint that follows a launch, off the caller's thread: the bytes it
///   covers read once and digested (time grows with the ledger; reported, not budgeted).
/// - `Ledger.change.N`: one `setStatus` (analytics denied; the ledger's last analytics record is a grant) on managers
///   launched over that directory: the ledger's append with its `fsync`, the checkpoint's replacement and the gate
///   state's save.
///
/// Each directory is written once per process, the first time one of its benchmarks runs, outside any measured region:
/// the records (three categories, grants and refusals, some from ATT and a CMP, policy version 1) written as JSON
/// Lines at once, then one append through `FileConsentLedger`, which writes the checkpoint. `Ledger.change.N` restores
/// the ledger's length, the checkpoint and the gate state before each sample (outside the measured region), so every
/// sample changes a ledger of N + 1 records. `report.py` holds the 100,000 ÷ 10 ratios (≤ 1.5, reported) and ceilings
/// on each benchmark's mallocs (gated): a launch or a change that read the whole trail would allocate per record.
func registerLedgerSeriesBenchmarks() {
    for size in LedgerSeries.sizes {
        Benchmark("Ledger.launch.\(size)", configuration: .ledgerSeries) { benchmark async in
            let series = LedgerSeries.prepared(size)
            benchmark.startMeasurement()
            let (privacy, consent) = series.launch()
            benchmark.stopMeasurement()
            // The last analytics record is a grant, the last advertising one a refusal.
            if !privacy.isEnabled(.analytics) || !consent.startupDiagnostics.isEmpty {
                benchmark.error("unexpected launch: \(privacy.reasons()), \(consent.startupDiagnostics)")
            }
            // The check of the checkpoint runs after the launch, off it: waited for outside the measured region, so
            // that no sample's check runs into the next sample.
            let found = await consent.waitForLedgerVerification()
            if !found.isEmpty { benchmark.error("the checkpoint did not hold: \(found)") }
            // The check read the whole ledger, which leaves the caches colder for the next sample the longer the
            // ledger: an unmeasured launch over the 10-record directory (whose check reads 2 KB) warms them again,
            // so that every size's samples start alike.
            let (_, warm) = LedgerSeries.prepared(LedgerSeries.sizes[0]).launch()
            await warm.waitForLedgerVerification()
        }

        Benchmark("Ledger.verify.\(size)", configuration: .ledgerSeries) { benchmark async in
            let series = LedgerSeries.prepared(size)
            let (_, consent) = series.launch()
            benchmark.startMeasurement()
            let found = await consent.waitForLedgerVerification()
            benchmark.stopMeasurement()
            if !found.isEmpty { benchmark.error("the checkpoint did not hold: \(found)") }
        }

        Benchmark("Ledger.change.\(size)", configuration: .ledgerSeries) { benchmark async in
            let series = LedgerSeries.prepared(size)
            series.restore()
            let (privacy, consent) = series.launch()
            // The check of the checkpoint that follows a launch is over before the change is measured.
            await consent.waitForLedgerVerification()
            // The denial and its flush: since issue 47's item 1 its call writes an intent, and the gate's flusher
            // appends the record and the checkpoint off the caller's thread; both are the change's cost.
            benchmark.startMeasurement()
            let record = try? await consent.setStatus(.denied, for: .analytics, source: .user)
            let flushed = await privacy.synchronize()
            benchmark.stopMeasurement()
            if record == nil || !flushed || privacy.isEnabled(.analytics) {
                benchmark.error("the consent change was not applied")
            }
        }
    }
}

extension Benchmark.Configuration {
    /// One launch or one change per sample. At most 300 samples: the 100,000-record directory is prepared once,
    /// and a change sample costs a few milliseconds of `fsync`.
    fileprivate static var ledgerSeries: Self {
        var configuration = reported(calls: .one)
        configuration.maxIterations = 300
        configuration.maxDuration = .seconds(2)
        return configuration
    }
}

/// A data directory with a ledger of `size` records and its checkpoint, and a gate state.
private final class LedgerSeries: Sendable {
    static let sizes = [10, 1_000, 100_000]
    static let configuration = PrivacyConfiguration(enabledFeatures: [.push, .analytics])

    private static let series = Mutex<[Int: LedgerSeries]>([:])

    let directory: PrivacyDataDirectory
    private let ledgerLength: Int
    private let checkpoint: Data
    private let state: Data

    /// The directory for `size`, written the first time it is asked for.
    static func prepared(_ size: Int) -> LedgerSeries {
        series.withLock { series in
            if let prepared = series[size] { return prepared }
            let prepared = LedgerSeries(size: size)
            series[size] = prepared
            return prepared
        }
    }

    private init(size: Int) {
        directory = PrivacyDataDirectory(
            url: URL(filePath: NSTemporaryDirectory())
                .appending(path: "featuregate-ledger-\(size)-\(UUID().uuidString)", directoryHint: .isDirectory))
        do {
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
            let trail = InMemoryConsentLedger()
            let categories: [ConsentCategory] = [.analytics, .advertising, .thirdPartySharing]
            let sources: [ConsentSource] = [.user, .user, .att, .cmp]
            var previous: [ConsentCategory: ConsentStatus] = [:]
            for index in 0..<(size - 1) {
                let category = categories[index % categories.count]
                let status: ConsentStatus = category == .advertising || index % 5 == 0 ? .denied : .granted
                try trail.append(
                    ConsentRecord(
                        category: category, previousStatus: previous[category] ?? .unknown, newStatus: status,
                        time: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)), policyVersion: 1,
                        source: sources[index % sources.count]))
                previous[category] = status
            }
            try trail.exportJSONLines().write(to: directory.consentLedgerFile)
            // The last record goes through the ledger, which writes the checkpoint (folding the whole file once).
            let ledger = FileConsentLedger(url: directory.consentLedgerFile)
            try ledger.append(
                ConsentRecord(
                    category: .analytics, previousStatus: previous[.analytics] ?? .unknown, newStatus: .granted,
                    time: Date(timeIntervalSince1970: 1_800_000_000 + Double(size)), policyVersion: 1, source: .user))
            // The gate state file as the package writes it (the record type is the package's own): analytics
            // (1 << 4) decided on.
            try Data(#"{"decidedFeatures":16,"deniedConsentCategories":[],"enabledFeatures":16,"version":2}"#.utf8)
                .write(to: directory.stateFile)
            ledgerLength = try Data(contentsOf: directory.consentLedgerFile).count
            checkpoint = try Data(contentsOf: ledger.checkpointURL)
            state = try Data(contentsOf: directory.stateFile)
        } catch {
            fatalError("cannot write the \(size)-record ledger: \(error)")
        }
    }

    /// What an app does at launch over the directory: a gate over its state, consent over its ledger.
    func launch() -> (PrivacyManager, ConsentManager) {
        let privacy = PrivacyManager(
            configuration: Self.configuration, store: FileFeatureStore(url: directory.stateFile),
            consentPolicy: .default)
        return (privacy, ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: directory.consentLedgerFile)))
    }

    /// Puts the ledger, its checkpoint and the gate state back as they were prepared.
    func restore() {
        do {
            let handle = try FileHandle(forWritingTo: directory.consentLedgerFile)
            try handle.truncate(atOffset: UInt64(ledgerLength))
            try handle.close()
            try checkpoint.write(to: FileConsentLedger(url: directory.consentLedgerFile).checkpointURL)
            try state.write(to: directory.stateFile)
        } catch {
            fatalError("cannot restore the \(ledgerLength)-byte ledger: \(error)")
        }
    }
}
