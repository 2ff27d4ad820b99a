// A launch, as the issue measures it (report.py, "Launch allocations"): a fresh process to its first `isEnabled`,
// with the gate and the consent manager over a data directory. `launch-probe DIR prepare` writes the directory first
// (analytics granted, push enabled); `launch-probe DIR` is the launch that is counted: it prints what `isEnabled`
// answered, the allocations its thread made up to the answer, those of the whole process by then, and those of the
// whole process once the consent manager's check of the ledger checkpoint (a task of its own) has finished.
// `launch-probe DIR first` exits right after the answer, for a profiler: valgrind (3.19) crashes on a Swift process
// whose main thread waits for a task.
import CMallocCounter
import FeatureGate
import Foundation

let data = PrivacyDataDirectory(url: URL(filePath: CommandLine.arguments[1]))
let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
let privacy = PrivacyManager(
    configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
    consentPolicy: policy)
let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
if CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "prepare" {
    _ = try await consent.setStatus(.granted, for: .analytics, source: .user)
    privacy.enableFeatures(.push)
    await consent.waitForLedgerVerification()
    exit(0)
}
let enabled = privacy.isEnabled(.analytics)
let thread = featuregate_probe_thread_allocations()
let process = featuregate_probe_process_allocations()
if CommandLine.arguments.count > 2 { exit(enabled ? 0 : 1) }
await consent.waitForLedgerVerification()
print(enabled, thread, process, featuregate_probe_process_allocations())
exit(0)
