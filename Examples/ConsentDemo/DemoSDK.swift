import FeatureGate
import FeatureGateRemote
import Foundation
import NoopRuntime

/// An error of the demo itself, with a sentence.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A small SDK built the way FeatureGate intends: consent decides the features, every subsystem reaches files
/// and the network only through gated wrappers, and the runtime starts, stops and purges them as features change.
///
/// The data directory follows ``PrivacyDataDirectory``: `featuregate-state.json`, `consent-ledger.jsonl` (with its
/// `.checkpoint`), `anonymous-id`, `featuregate-remote.json` and `.featuregate.lock` at the top, each subsystem's
/// files in a folder of its own. After revoke-all only `PrivacyDataDirectory.retainedFileNames` are left (the lock
/// file, the gate's state, the ledger and its checkpoint), with `featuregate-remote.json` once a server payload
/// was kept: four or five files.
final class DemoSDK: Sendable {
    let files: PrivacyDataDirectory
    let privacy: PrivacyManager
    let consent: ConsentManager
    let identifier: AnonymousIdentifier
    let runtime: SubsystemRuntime
    let revocation: ConsentRevocation
    /// What each feature's gated I/O allowed and refused.
    let counter = IOCounter()
    let collector: LoopbackCollector
    let analytics: AnalyticsSubsystem
    /// Fetches the server's kill switch from the collector, only while some feature is enabled locally.
    let refresher: RemoteDataRefresher
    /// Follows what other processes (an app's extensions) write to the data directory; `nil` when the watch could
    /// not start (the directory's parent does not exist). Starting it writes nothing.
    let watching: ObservationToken?
    /// Who the server's payloads are read for: the demo is app 1.0.2 with SDK 17.2.0 on iOS.
    static let remoteTarget = RemoteConfigTarget(platform: .ios, sdkVersion: "17.2.0", appVersion: "1.0.2")
    /// Features the configuration or the stored state enabled that the consent manager switched off at start,
    /// because their categories are not granted.
    let heldOffByConsent: Feature
    private let uploads: GatedTransport
    /// With `--hold-undecided`: analytics events tracked while analytics consent is undecided wait in memory.
    private let hold = LockedValue<ConsentHoldingBuffer<AnalyticsEvent>?>(nil)
    /// App Tracking Transparency, once an `att:` step has run: the scripted system, and the mapping onto consent.
    private let tracking = LockedValue<(authorizer: ScriptedTrackingAuthorizer, consent: TrackingConsent)?>(nil)

    /// Builds the SDK. Reads the gate's stored state and the consent ledger once; with nothing stored and nothing
    /// enabled it writes nothing and opens nothing.
    init(
        dataDirectory: URL, configuration: PrivacyConfiguration, policy: ConsentPolicy = .default,
        region: ConsentRegion? = nil, clock: LockedValue<Date>, slowCollector: Duration? = nil
    ) {
        collector = LoopbackCollector(slowEvents: slowCollector)
        files = PrivacyDataDirectory(url: dataDirectory)
        // Given the policy, no opt-in category's features run until the consent manager has read the ledger.
        // The kept remote layer (the server's last valid kill switch) is read here, before anything checks a flag.
        let privacy = PrivacyManager(
            configuration: configuration, store: FileFeatureStore(url: files.stateFile), consentPolicy: policy,
            remoteLayer: RemoteLayerFile(
                url: files.remoteLayerFile, interpreter: RemoteConfigInterpreter(target: Self.remoteTarget)))
        let counter = counter
        let runtime = SubsystemRuntime(privacy: privacy)
        self.privacy = privacy
        self.runtime = runtime
        consent = ConsentManager(
            privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile), region: region,
            now: { clock.withLock { $0 } })
        watching = try? privacy.watchForChangesFromOtherProcesses(in: files) { [consent] in
            Task { await consent.catchUpWithLedger() }
        }
        heldOffByConsent = privacy.reasons().filter { $0.isLocallyEnabled && !$0.isPermitted }.reduce(into: []) {
            $0.formUnion($1.feature)
        }
        identifier = AnonymousIdentifier(privacy: privacy, url: files.anonymousIdentifierFile)
        revocation = ConsentRevocation(consent: consent, runtime: runtime, identifier: identifier)
        let http = LoopbackHTTPTransport(collector: collector)
        // Not gated: the refresher checks the local layer itself, so a remote "all" can still be lifted.
        refresher = RemoteDataRefresher(privacy: privacy, transport: http, path: LoopbackCollector.remoteDataPath)
        func storage(_ folder: String, _ feature: Feature) -> GatedStorage {
            GatedStorage(
                FileStorage(directory: dataDirectory.appending(path: folder)),
                features: feature,
                privacy: privacy,
                counter: counter
            )
        }
        func transport(_ feature: Feature) -> GatedTransport {
            GatedTransport(http, features: feature, privacy: privacy, counter: counter)
        }
        uploads = transport(.analytics)
        analytics = AnalyticsSubsystem(
            storage: storage("analytics", .analytics),
            transport: uploads,
            privacy: privacy,
            counter: counter
        )
        runtime.register(PushSubsystem(storage: storage("push", .push), transport: transport(.push)))
        runtime.register(analytics)
        runtime.register(
            MessageCenterSubsystem(
                storage: storage("message-center", .messageCenter), transport: transport(.messageCenter))
        )
        runtime.register(ContactsSubsystem(storage: storage("contacts", .contacts), transport: transport(.contacts)))
    }

    /// From now on, analytics events tracked while analytics consent is undecided are held in memory (never
    /// written, never sent) and join the queue if it is granted.
    func holdUndecidedAnalytics() async {
        let holding = await ConsentHoldingBuffer(
            buffer: analytics.buffer, consent: consent, category: .analytics, capacity: 100)
        hold.withLock { $0 = holding }
    }

    /// Events waiting in memory for analytics consent, and those dropped or purged from the hold.
    var heldAnalytics: (held: Int, dropped: Int, purged: Int, released: Int)? {
        hold.withLock { $0 }.map { ($0.heldCount, $0.droppedCount, $0.purgedCount, $0.releasedCount) }
    }

    /// Tracks `count` sample events (screen view, purchase, ad impression, location, repeating) and flushes them.
    ///
    /// Each event is sanitized for the current consent and minimized before it is queued. While analytics is off
    /// nothing is built: each event is refused and counted, and a flush purges instead of delivering.
    func track(_ count: Int) async -> (accepted: Int, sanitized: [SanitizedEvent], report: FlushReport) {
        var accepted = 0
        var sanitized: [SanitizedEvent] = []
        let isOpen = analytics.buffer.isOpen
        var holding = isOpen ? nil : hold.withLock { $0 }
        if holding != nil, await consent.status(for: .analytics) != .unknown { holding = nil }
        if isOpen || holding != nil {
            let sanitizer = await consent.sanitizer(policy: DemoEvent.fieldPolicy)
            let advertisingID = await tracking.withLock { $0?.consent }?.advertisingIdentifier
            // Only while analytics is on: with push alone on, or while events are only held, an identifier would
            // be created (a file written) for nothing.
            let anonymousID = isOpen ? try? identifier.current() : nil
            for index in 0..<count {
                let event = SanitizedEvent(DemoEvent.sample(index, advertisingID: advertisingID), sanitizer: sanitizer)
                sanitized.append(event)
                if analytics.track(event, anonymousID: anonymousID, hold: holding) { accepted += 1 }
            }
        } else {
            for _ in 0..<count { analytics.refuse() }
        }
        return (accepted, sanitized, await analytics.flush())
    }

    /// App Tracking Transparency reports `status`, mapped onto advertising consent (source `att`).
    ///
    /// The first time, the system prompt is shown (the scripted person answers `status`); afterwards the prompt
    /// is one-shot, so a new status means the person changed it in Settings, and it is synchronized.
    func applyTracking(_ status: TrackingAuthorizationStatus) async throws(ConsentRecordingError) -> String {
        let existing = tracking.withLock { $0 }
        if let existing {
            existing.authorizer.status = status
            try await existing.consent.synchronize()
            return "changed in Settings to \(status): advertising consent \(status.advertisingConsent)"
        }
        let authorizer = ScriptedTrackingAuthorizer(status: .notDetermined, answer: status)
        let mapping = TrackingConsent(authorizer: authorizer, consent: consent)
        tracking.withLock { $0 = (authorizer, mapping) }
        guard status != .notDetermined else {
            try await mapping.synchronize()
            return "not asked yet: advertising consent unknown"
        }
        switch try await mapping.requestIfNeeded() {
        case .prompted(let answer):
            return "prompted, answered \(answer): advertising consent \(answer.advertisingConsent)"
        case .alreadyDetermined(let current):
            return "not prompted, already \(current): advertising consent \(current.advertisingConsent)"
        case .notShown:
            return "prompt not shown (app not active): advertising consent unchanged"
        case .missingUsageDescription:
            return "not prompted (no NSUserTrackingUsageDescription): advertising consent unchanged"
        }
    }

    /// Revoke-all, with an erasure request naming the anonymous identifier: `POST /api/erasure`.
    func revokeAll() async -> RevocationReport {
        collector.markRevocationBegan()
        return await revocation.revokeAll(
            source: .user,
            erasure: ErasureRequest(via: uploads) { id in
                let body = #"{"anonymousID":"\#(id?.uuidString.lowercased() ?? "")","erase":"all"}"#
                return TransportRequest(method: "POST", path: "/api/erasure", body: Data(body.utf8))
            }
        )
    }
}
