// What the README's and the DocC articles' snippets assume the reader already has, declared with the types the
// snippets need, so scripts/check-snippets.sh can type-check them. Only the types matter: nothing here runs.
// A snippet that declares one of these names itself uses its own.
import FeatureGate
import FeatureGateIAB
import Foundation
import NoopRuntime

private func standIn<Value>() -> Value { fatalError("snippet context: type-checked, never run") }

// The app's state and directories.
public var privacy: PrivacyManager { standIn() }
public var consent: ConsentManager { standIn() }
public var runtime: SubsystemRuntime { standIn() }
public var uploads: GatedTransport { standIn() }
public var configuration: PrivacyConfiguration { standIn() }
public var store: any FeatureStore { standIn() }
public var configURL: URL { standIn() }
public var dataDirectory: URL { standIn() }
public var inboxDirectory: URL { standIn() }
public var support: String { standIn() }
public var supportDirectory: String { standIn() }
public var applicationSupport: String { standIn() }
public var bytes: Data { standIn() }
public var infoPlistSection: [String: Any] { standIn() }
public var ledgerURL: URL { standIn() }

// What the app knows of its user and itself.
public var regionCodeFromServer: String { standIn() }
public var accountIsAChild: Bool { standIn() }
public var appVersion: String { standIn() }
public var remoteDataPath: String { standIn() }

// The app's network client, requests and UI.
public var httpClient: any Transport { standIn() }
public var client: any Transport { standIn() }
public var request: TransportRequest { standIn() }
public func showConsentDialog() async -> Bool { standIn() }
public func log(_ message: String) {}
public func report(_ diagnostic: some CustomStringConvertible) {}
public var airshipAppKey: String { standIn() }

/// An app's analytics subsystem (README).
public final class AnalyticsSubsystem: Subsystem {
    public let requiredFeatures: Feature = .analytics
    public init(transport: GatedTransport) {}
    public func start() async throws {}
    public func stop(reason: StopReason) async {}
    public func purge() async -> PurgeReport { PurgeReport() }
}

/// An SDK's event and its buffer (GettingStartedForSDKAuthors).
public struct Event: Sendable {}
public final class EventList {
    public func append(_ event: Event) {}
}
public var buffer: EventList { standIn() }

/// A subsystem an SDK starts and stops itself.
public final class PushService {
    public func start() {}
    public func stop() {}
}
/// An SDK's analytics store, an actor, so a `@Sendable` observer may capture it.
public actor AnalyticsService {
    public func purge() {}
}
public var push: PushService { standIn() }
public var analytics: AnalyticsService { standIn() }
