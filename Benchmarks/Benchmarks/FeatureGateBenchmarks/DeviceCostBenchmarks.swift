import Benchmark
import CFlushCounter
import FeatureGate
import Foundation
import NoopRuntime

#if canImport(Glibc)
import Glibc
#endif

/// Issue 47: what the package costs the device around the hot path. One operation per sample, on a data directory of
/// its own (prepared outside the measured region), with the process's flushes counted (`CFlushCounter`: every `fsync`
/// and `fdatasync`, and of them those of directories) from the call until the process has made none for 10 ms, so a
/// flush made off the caller's thread after it returned counts too. The time is the caller's: the call alone.
///
/// - `Device.disable`, `Device.disable.busyLock`: `disableFeatures(.messageCenter)` with the data directory's lock
///   free, and while another holder keeps it (an open file description of this process holding `flock`, which the
///   package cannot tell from another process's): the take-away behind a busy lock.
/// - `Device.consent.deny`, `Device.consent.grant`: one `setStatus` of analytics on file-backed managers; the denial
///   while another holder keeps the lock (it takes none since issue 47's item 1), then counted until `synchronize()`.
/// - `Device.revokeAll`, `Device.revokeAll.busyLock`: `ConsentRevocation.revokeAll()` over the gate, consent (analytics
///   granted), messageCenter enabled and a stored anonymous identifier; the second while another holder keeps the lock
///   (issue 47, item 3: it returns without waiting for the identifier's deletion).
///
/// `report.py` holds each operation's flushes to a budget (the most in any sample); times are reported. (The launch's
/// allocations and the binary's size are measured by report.py on probe programs: Benchmarks/LaunchProbes,
/// Benchmarks/SizeProbes.)
func registerDeviceCostBenchmarks() {
    // The disable's flushes are made off the caller's thread (issue 47, item 1): counted until `synchronize()`
    // returned and the process is quiet, the caller's own counted apart (gated at zero).
    Benchmark("Device.disable", configuration: .deviceCost) { benchmark async in
        let directory = DeviceDirectory()
        defer { directory.remove() }
        let (privacy, _) = directory.launch()
        privacy.enableFeatures(.messageCenter)
        await Flushes.measure(in: benchmark, { privacy.disableFeatures(.messageCenter) }) {
            if !(await privacy.synchronize()) { benchmark.error("the disable was not flushed") }
        }
        if privacy.isEnabled(.messageCenter) { benchmark.error("the disable did not close the gate") }
    }

    // Behind another holder: the call (timed) while it keeps the lock; then the holder lets go, and the flushes the
    // disable leads to are counted until `synchronize()` returned.
    Benchmark("Device.disable.busyLock", configuration: .deviceCost) { benchmark async in
        let directory = DeviceDirectory()
        defer { directory.remove() }
        let (privacy, _) = directory.launch()
        privacy.enableFeatures(.messageCenter)
        let lock = directory.takeLock()
        await Flushes.measure(in: benchmark, { privacy.disableFeatures(.messageCenter) }) {
            directory.release(lock)
            if !(await privacy.synchronize()) { benchmark.error("the disable was not flushed") }
        }
        if privacy.isEnabled(.messageCenter) { benchmark.error("the disable did not close the gate") }
        directory.settle()
    }

    for status in [ConsentStatus.denied, .granted] {
        Benchmark("Device.consent.\(status == .denied ? "deny" : "grant")", configuration: .deviceCost) {
            benchmark async in
            let directory = DeviceDirectory()
            defer { directory.remove() }
            let (privacy, consent) = directory.launch()
            _ = try? await consent.setStatus(status == .denied ? .granted : .denied, for: .analytics, source: .user)
            await consent.waitForLedgerVerification()
            // The preparing denial's flushes are its flusher's: done before the measured change.
            _ = await privacy.synchronize()
            if status == .denied {
                // A refusal's flushes are the flusher's (issue 47, item 1): the call is made while another holder
                // keeps the lock (a refusal takes none), so what the process flushed before it returned is the
                // call's own; then the holder lets go and the flushes it leads to are counted until `synchronize()`.
                let lock = directory.takeLock()
                await Flushes.measure(
                    in: benchmark, { _ = try? await consent.setStatus(status, for: .analytics, source: .user) }
                ) {
                    directory.release(lock)
                    if !(await privacy.synchronize()) { benchmark.error("the denial was not flushed") }
                }
            } else {
                await Flushes.measure(in: benchmark) {
                    _ = try? await consent.setStatus(status, for: .analytics, source: .user)
                }
            }
            if privacy.isEnabled(.analytics) != (status == .granted) {
                benchmark.error("the consent change was not applied")
            }
        }
    }

    for busy in [false, true] {
        Benchmark("Device.revokeAll\(busy ? ".busyLock" : "")", configuration: .deviceCost) { benchmark async in
            let directory = DeviceDirectory()
            defer { directory.remove() }
            let (privacy, consent) = directory.launch()
            _ = try? await consent.setStatus(.granted, for: .analytics, source: .user)
            privacy.enableFeatures(.messageCenter)
            let identifier = AnonymousIdentifier(privacy: privacy, url: directory.data.anonymousIdentifierFile)
            _ = try? identifier.current()
            await consent.waitForLedgerVerification()
            let revocation = ConsentRevocation(
                consent: consent, runtime: SubsystemRuntime(privacy: privacy), identifier: identifier)
            let revoke = { await Flushes.measure(in: benchmark) { _ = await revocation.revokeAll() } }
            if busy {
                let lock = directory.takeLock()
                await revoke()
                directory.release(lock)
            } else {
                await revoke()
            }
            if privacy.isAnyEnabled() { benchmark.error("revoke-all left a feature enabled") }
            directory.settle()
        }
    }
}

/// The flush counter, read around one operation.
enum Flushes {
    static var flushes: BenchmarkMetric { .custom("Flushes", polarity: .prefersSmaller, useScalingFactor: false) }
    static var directoryFlushes: BenchmarkMetric {
        .custom("Directory flushes", polarity: .prefersSmaller, useScalingFactor: false)
    }
    /// The flushes made on the caller's thread during the call (the measured thread's own).
    static var callerFlushes: BenchmarkMetric {
        .custom("Caller flushes", polarity: .prefersSmaller, useScalingFactor: false)
    }
    static var metrics: [BenchmarkMetric] { [flushes, directoryFlushes, callerFlushes] }

    /// Times the synchronous `operation` (the caller's thread), counting the flushes it makes on that thread; runs
    /// `afterwards` (untimed: a lock let go, a `synchronize()`), then counts the process's flushes from the start of
    /// `operation` until none came for 10 ms.
    static func measure(
        in benchmark: Benchmark, _ operation: () -> Void, afterwards: () async -> Void
    ) async {
        let (all, directories) = (featuregate_bench_flushes(), featuregate_bench_directory_flushes())
        let own = featuregate_bench_thread_flushes()
        benchmark.startMeasurement()
        operation()
        benchmark.stopMeasurement()
        benchmark.measurement(callerFlushes, featuregate_bench_thread_flushes() - own)
        await afterwards()
        record(in: benchmark, since: all, directories)
    }

    /// ``measure(in:_:afterwards:)`` for an `async` operation, which runs on threads of the actor it calls: the
    /// flushes counted as the caller's are the whole process's until it returned (measure it while nothing else of
    /// the process can flush).
    static func measure(
        in benchmark: Benchmark, _ operation: () async -> Void, afterwards: () async -> Void
    ) async {
        let (all, directories) = (featuregate_bench_flushes(), featuregate_bench_directory_flushes())
        benchmark.startMeasurement()
        await operation()
        benchmark.stopMeasurement()
        benchmark.measurement(callerFlushes, featuregate_bench_flushes() - all)
        await afterwards()
        record(in: benchmark, since: all, directories)
    }

    /// Times `operation` (the caller's thread) and counts the process's flushes from its start until none came for
    /// 10 ms (at most 2 s): those it made itself and any it left to another thread.
    static func measure(in benchmark: Benchmark, _ operation: () -> Void) {
        let (all, directories) = (featuregate_bench_flushes(), featuregate_bench_directory_flushes())
        benchmark.startMeasurement()
        operation()
        benchmark.stopMeasurement()
        record(in: benchmark, since: all, directories)
    }

    /// ``measure(in:_:)`` for an `async` operation.
    static func measure(in benchmark: Benchmark, _ operation: () async -> Void) async {
        let (all, directories) = (featuregate_bench_flushes(), featuregate_bench_directory_flushes())
        benchmark.startMeasurement()
        await operation()
        benchmark.stopMeasurement()
        record(in: benchmark, since: all, directories)
    }

    private static func record(in benchmark: Benchmark, since all: Int, _ directories: Int) {
        var last = featuregate_bench_flushes()
        var quiet = 0
        for _ in 0..<1_000 where quiet < 5 {
            usleep(2_000)
            let now = featuregate_bench_flushes()
            quiet = now == last ? quiet + 1 : 0
            last = now
        }
        benchmark.measurement(flushes, last - all)
        benchmark.measurement(directoryFlushes, featuregate_bench_directory_flushes() - directories)
    }
}

/// A data directory of one sample: the gate state and the consent ledger, under a folder removed afterwards.
struct DeviceDirectory {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
    let root = URL(filePath: NSTemporaryDirectory())
        .appending(path: "featuregate-device-\(UUID().uuidString)", directoryHint: .isDirectory)
    var data: PrivacyDataDirectory { PrivacyDataDirectory(url: root.appending(path: "data")) }

    func launch() -> (PrivacyManager, ConsentManager) {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy)
        return (privacy, ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile)))
    }

    /// Takes the data directory's lock as another process would: `flock` on a descriptor of its own.
    func takeLock() -> Int32 {
        try? FileManager.default.createDirectory(at: data.url, withIntermediateDirectories: true)
        let descriptor = open(data.url.appending(path: ".featuregate.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        _ = flock(descriptor, LOCK_EX)
        return descriptor
    }

    func release(_ lock: Int32) {
        _ = flock(lock, LOCK_UN)
        _ = close(lock)
    }

    func holdingLock(_ body: () -> Void) {
        let lock = takeLock()
        body()
        release(lock)
    }

    /// Lets what waited for the lock finish (held writes, owed deletions) before the folder goes.
    func settle() {
        var last = featuregate_bench_flushes()
        var quiet = 0
        while quiet < 25 {
            usleep(2_000)
            let now = featuregate_bench_flushes()
            quiet = now == last ? quiet + 1 : 0
            last = now
        }
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

extension Benchmark.Configuration {
    /// One operation per sample, each on a directory of its own: at most 25 samples (each flushes a few times and
    /// waits 10 ms for flushes made off the caller's thread).
    fileprivate static var deviceCost: Self {
        var configuration = reported(calls: .one, extraMetrics: Flushes.metrics)
        configuration.warmupIterations = 1
        configuration.maxIterations = 25
        configuration.maxDuration = .seconds(2)
        return configuration
    }
}
