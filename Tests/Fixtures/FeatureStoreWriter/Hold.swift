// `hold DIR TEMPORARY`: a process that holds a data directory's lock, for the tests of callers that must not wait on
// another process (a lock holder stopped with SIGSTOP stands for a debugger, a suspended process, a slow disk).
import FeatureGate
import Foundation
import PackageTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Takes `flock(LOCK_EX)` on `directory`'s lock file, optionally leaves a temporary file there, prints `saving` and
/// waits to be killed.
func holdLock(directory: URL, leavingTemporary: Bool) -> Never {
    let path = directory.path(percentEncoded: false)
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let descriptor = open(path + "/.featuregate.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { exit(1) }
    if leavingTemporary {
        let temporary = path + "/." + PrivacyDataDirectory.stateFileName + ".tmp-\(getpid())-1"
        _ = FileManager.default.createFile(atPath: temporary, contents: Data("{".utf8))
    }
    FileHandle.standardOutput.write(Data("saving\n".utf8))
    while true { pause() }
}

/// `probe DIR`: what a process on DIR sees while another holds its lock (stopped): how long its start-up took, how
/// long `disableFeatures(.messageCenter)` blocked, when the gate read the flag off (from the call's start), and how
/// long a `reasons()` begun 10 ms into the call blocked; one `NAME MILLISECONDS` line each.
func probe(directory: URL) -> Never {
    let data = PrivacyDataDirectory(url: directory)
    let clock = ContinuousClock()
    let start = clock.now
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: .all), store: FileFeatureStore(url: data.stateFile))
    let startUp = clock.now - start
    let closed = LockedValue<Duration?>(nil)
    let explained = LockedValue<Duration?>(nil)
    let began = LockedValue<ContinuousClock.Instant?>(nil)
    Thread.detachNewThread {
        while began.withLock({ $0 }) == nil {}
        while privacy.isEnabled(.messageCenter) {}
        closed.withLock { $0 = clock.now - began.withLock { $0! } }
    }
    Thread.detachNewThread {
        while began.withLock({ $0 }) == nil {}
        usleep(10_000)
        let asked = clock.now
        _ = privacy.reasons()
        explained.withLock { $0 = clock.now - asked }
    }
    let call = clock.now
    began.withLock { $0 = call }
    privacy.disableFeatures(.messageCenter)
    let disable = clock.now - call
    while closed.withLock({ $0 }) == nil || explained.withLock({ $0 }) == nil { usleep(1_000) }
    print("start-up \(milliseconds(startUp))")
    print("disable \(milliseconds(disable))")
    print("gate-closed \(milliseconds(closed.withLock { $0! }))")
    print("reasons \(milliseconds(explained.withLock { $0! }))")
    exit(0)
}

/// `consent-probe DIR`: what a process on DIR sees of consent while another holds its lock (stopped), with analytics
/// granted there before: how long start-up took, how long `setStatus(.denied, for: .analytics)` blocked, when the gate
/// read analytics off (from the call's start), how long a grant and a revoke-all's `denyAll` made after it blocked,
/// and whether each was held; one `NAME MILLISECONDS` or `NAME held|recorded` line each.
func consentProbe(directory: URL) async -> Never {
    let data = PrivacyDataDirectory(url: directory)
    let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics, .advertising: .inAppAutomation])
    let clock = ContinuousClock()
    let start = clock.now
    let (privacy, consent) = launchGateAndConsent(on: data, policy: policy)
    print("start-up \(milliseconds(clock.now - start))")
    guard privacy.isEnabled(.analytics) else {
        print("analytics is not granted in \(directory.path(percentEncoded: false))")
        exit(1)
    }
    let began = LockedValue<ContinuousClock.Instant?>(nil)
    let closed = LockedValue<Duration?>(nil)
    Thread.detachNewThread {
        while began.withLock({ $0 }) == nil {}
        while privacy.isEnabled(.analytics) {}
        closed.withLock { $0 = clock.now - began.withLock { $0! } }
    }
    func timed(_ name: String, _ body: () async throws(ConsentRecordingError) -> Void) async {
        let call = clock.now
        if began.withLock({ $0 }) == nil { began.withLock { $0 = call } }
        var outcome = "recorded"
        do throws(ConsentRecordingError) { try await body() } catch { outcome = error.isHeld ? "held" : "\(error)" }
        print("\(name) \(milliseconds(clock.now - call)) \(outcome)")
    }
    await timed("deny") { () async throws(ConsentRecordingError) in
        _ = try await consent.setStatus(.denied, for: .analytics, source: .user)
    }
    while closed.withLock({ $0 }) == nil { usleep(1_000) }
    print("gate-closed \(milliseconds(closed.withLock { $0! }))")
    await timed("grant") { () async throws(ConsentRecordingError) in
        _ = try await consent.setStatus(.granted, for: .advertising, source: .user)
    }
    await timed("deny-all") { () async throws(ConsentRecordingError) in _ = try await consent.denyAll(source: .user) }
    exit(0)
}

func milliseconds(_ duration: Duration) -> String {
    String(format: "%.1f", Double(duration / .microseconds(1)) / 1_000)
}

/// `burst DIR SEED COUNT`: COUNT seeded random changes as fast as it can on DIR: analytics granted or denied through
/// a ConsentManager (policy: analytics maps `.analytics`), or push turned on or off; the writers of the convergence
/// stress test.
func burst(directory: URL, seed: UInt64, count: Int) async throws {
    let data = PrivacyDataDirectory(url: directory)
    let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
        consentPolicy: policy)
    let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
    var random = SeededGenerator(seed: seed)
    for _ in 0..<count {
        if Bool.random(using: &random) {
            let status: ConsentStatus = Bool.random(using: &random) ? .granted : .denied
            try await setAndRecord(consent, status, for: .analytics)
        } else if Bool.random(using: &random) {
            privacy.enableFeatures(.push)
        } else {
            privacy.disableFeatures(.push)
        }
    }
    while privacy.isHoldingWrites { usleep(1_000) }
    // A disable's save is made off the caller's thread: the writer waits for it before it exits.
    _ = await privacy.synchronize()
}

/// Sets `status` for `category` and waits until it is recorded: a change held while another process kept the lock
/// past the bound is recorded in the background, and a process exiting before that would lose it.
func setAndRecord(_ consent: ConsentManager, _ status: ConsentStatus, for category: ConsentCategory) async throws {
    do {
        _ = try await consent.setStatus(status, for: category, source: .user)
    } catch  where error.isHeld {}
    while await consent.isHoldingChanges { try await Task.sleep(for: .milliseconds(1)) }
}
