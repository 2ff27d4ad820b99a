import FeatureGate
import Foundation
import NoopRuntime

/// An error of the demo itself, with a sentence.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A small SDK built the way NoopRuntime intends: every subsystem reaches files and the network only through
/// gated wrappers, and the runtime starts, stops and purges them as features change.
final class DemoSDK: Sendable {
    let privacy: PrivacyManager
    let runtime: SubsystemRuntime
    let ledger = IOLedger()
    let collector = LoopbackCollector()
    let analytics: AnalyticsSubsystem
    let dataDirectory: URL

    /// Builds the SDK. Reads the gate's stored state once; writes nothing and opens nothing.
    init(dataDirectory: URL, initialFeatures: Feature) {
        self.dataDirectory = dataDirectory
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: initialFeatures),
            store: FileFeatureStore(url: dataDirectory.appending(path: "featuregate-state.json"))
        )
        let ledger = ledger
        let runtime = SubsystemRuntime(privacy: privacy)
        self.privacy = privacy
        self.runtime = runtime
        let http = LoopbackHTTPTransport(collector: collector)
        func storage(_ folder: String, _ feature: Feature) -> GatedStorage {
            GatedStorage(
                FileStorage(directory: dataDirectory.appending(path: folder)),
                features: feature,
                privacy: privacy,
                ledger: ledger
            )
        }
        func transport(_ feature: Feature) -> GatedTransport {
            GatedTransport(http, features: feature, privacy: privacy, ledger: ledger)
        }
        analytics = AnalyticsSubsystem(
            storage: storage("analytics", .analytics),
            transport: transport(.analytics),
            privacy: privacy,
            ledger: ledger
        )
        runtime.register(PushSubsystem(storage: storage("push", .push), transport: transport(.push)))
        runtime.register(analytics)
        runtime.register(
            MessageCenterSubsystem(
                storage: storage("message-center", .messageCenter), transport: transport(.messageCenter))
        )
        runtime.register(ContactsSubsystem(storage: storage("contacts", .contacts), transport: transport(.contacts)))
    }

    /// Tracks `count` events and flushes them (a flush while analytics is off purges instead).
    func track(_ count: Int) async -> (accepted: Int, report: FlushReport) {
        var accepted = 0
        for index in 0..<count {
            if analytics.track("demo_event_\(index + 1)") { accepted += 1 }
        }
        return (accepted, await analytics.buffer.flush())
    }
}
