import FeatureGate
import Foundation
import NoopRuntime

/// What one call to ``RemoteDataRefresher/refreshIfDue()`` or ``RemoteDataRefresher/refresh()`` did.
public enum RemoteRefreshOutcome: Sendable, CustomStringConvertible {
    /// Nothing is enabled locally (with consent): no request was sent, nothing was kept.
    case nothingEnabled
    /// The last refresh (or failure's backoff) is too recent: no request was sent.
    case notDue
    /// Another refresh is under way: no request was sent.
    case inProgress
    /// A new payload was kept and applied.
    case updated(RemoteDisables)
    /// The server answered `304 Not Modified`: the kept layer stays, and is fresh.
    case notModified
    /// The request failed, the server answered an error, or the payload was invalid: the kept layer stays, and the
    /// next attempt waits for the backoff.
    case failed(String)

    /// One line, for logs.
    public var description: String {
        switch self {
        case .nothingEnabled: "nothing enabled locally: not fetched"
        case .notDue: "not due"
        case .inProgress: "already refreshing"
        case .updated(let disables): "updated: disables 0x\(String(disables.features.rawValue, radix: 16))"
        case .notModified: "not modified"
        case .failed(let reason): "failed (\(reason)); the kept layer stays"
        }
    }
}

/// Fetches the server's kill switch through the app's transport and hands each valid payload to the gate's remote
/// layer (`PrivacyManager.applyRemotePayload(_:entityTag:lastModified:)`).
///
/// Call ``refreshIfDue()`` when the app comes to the foreground (and when your SDK's features are turned on): it
/// fetches when the refresh interval has passed since the last success (the applying rules'
/// `remote_data_refresh_interval`, otherwise ``Timing/defaultInterval``, 10 s as Airship does) and any failure's
/// backoff has passed.
///
/// - It sends nothing while no feature is enabled locally with consent, ignoring the kill switch itself
///   (`PrivacyManager.isAnyFeatureEnabled(ignoringRemoteConfig:)`): a fully disabled SDK stays silent, and a
///   payload that disables everything can still be lifted by the next one.
/// - Requests are conditional: `If-None-Match` with the kept `ETag`, `If-Modified-Since` with the kept
///   `Last-Modified`.
/// - Every failure (transport error, a status other than 200, invalid or oversized payload, an `ok` that is not
///   `true`) keeps the kept layer and doubles the wait before the next attempt, up to ``Timing/maximumBackoff``.
/// - A 429 or 503 with `Retry-After` (delta-seconds or an HTTP date) holds every request back, ``refresh()``'s too,
///   until it has passed, capped at `RetryAfter.maximum` (1 day) so a hostile value cannot keep a lifted kill
///   switch from the app for longer.
/// - The interval a payload asks for is kept between ``Timing/minimumInterval`` (10 s) and
///   ``Timing/maximumInterval`` (1 day), so no payload can make every call a request.
/// - Validators (`ETag`, `Last-Modified`) longer than ``maximumValidatorLength`` bytes are neither kept nor sent: a
///   server or proxy cannot make every later request carry a huge header (and be refused for it).
///
/// Safe to call from any thread; concurrent calls send at most one request at a time.
public final class RemoteDataRefresher: Sendable {
    /// When to ask the server again.
    public struct Timing: Sendable, Hashable {
        /// The interval when the payload names none: 10 seconds.
        public var defaultInterval: Double = 10
        /// The longest interval a payload can ask for (1 day), so a lifted switch always reaches the app.
        public var maximumInterval: Double = 86_400
        /// The shortest interval a payload can ask for (10 seconds): a smaller value, `0` included, counts as this.
        public var minimumInterval: Double = 10
        /// The wait after the first failure (10 seconds), doubled for each further failure in a row.
        public var initialBackoff: Double = 10
        /// The longest wait after failures: 10 minutes.
        public var maximumBackoff: Double = 600

        /// Airship's timing: 10 s on foreground, backoff from 10 s to 10 min.
        public init() {}
    }

    private let privacy: PrivacyManager
    private let transport: any Transport
    private let path: String
    private let timing: Timing
    private let now: @Sendable () -> Double
    private let state: LockedValue<State>

    private struct State {
        var isRefreshing = false
        /// The earliest time (from `now`) the next request may go out.
        var nextAllowed: Double = -.infinity
        var consecutiveFailures = 0
        var interval: Double
        /// Until when (from `now`) the server's `Retry-After` holds every request back.
        var retryAfterUntil: Double = -.infinity
    }

    /// The longest `ETag` or `Last-Modified` kept and sent back, in bytes: 1 KiB.
    public static let maximumValidatorLength = 1024

    /// Creates a refresher. Sends nothing until ``refreshIfDue()`` or ``refresh()`` is called.
    ///
    /// - Parameters:
    ///   - privacy: The gate; it must have a `RemoteLayerFile` (`PrivacyManager(…, remoteLayer:)`).
    ///   - transport: The app's client. Not a `GatedTransport`: that one would refuse while the kill switch is on,
    ///     so the switch could never be lifted. The refresher checks the gate itself.
    ///   - path: The remote-data URL path (and query) to `GET`, such as `/api/remote-data/app/KEY/ios?sdk_version=…`.
    ///   - timing: Intervals and backoff.
    ///   - now: A monotonic clock in seconds, for tests; the default is the system's continuous clock.
    public init(
        privacy: PrivacyManager, transport: any Transport, path: String, timing: Timing = Timing(),
        now: (@Sendable () -> Double)? = nil
    ) {
        self.privacy = privacy
        self.transport = transport
        self.path = path
        self.timing = timing
        self.now = now ?? RetryAfter.monotonicSeconds()
        let kept = privacy.keptRemoteLayer.flatMap { try? privacy.remoteLayer?.interpreter.disables(in: $0.payload) }
        self.state = LockedValue(State(interval: Self.clamp(kept?.refreshInterval, timing)))
    }

    /// Fetches if something is enabled locally, the interval has passed since the last success, and any backoff
    /// has passed. Call it on every foreground.
    public func refreshIfDue() async -> RemoteRefreshOutcome {
        await refresh(onlyIfDue: true)
    }

    /// Fetches now if something is enabled locally, whatever the interval and backoff.
    public func refresh() async -> RemoteRefreshOutcome {
        await refresh(onlyIfDue: false)
    }

    private func refresh(onlyIfDue: Bool) async -> RemoteRefreshOutcome {
        guard privacy.isAnyFeatureEnabled(ignoringRemoteConfig: true) else { return .nothingEnabled }
        let time = now()
        let claim: RemoteRefreshOutcome? = state.withLock { state in
            if state.isRefreshing { return .inProgress }
            if onlyIfDue && time < state.nextAllowed { return .notDue }
            if time < state.retryAfterUntil { return .notDue }
            state.isRefreshing = true
            return nil
        }
        if let claim { return claim }

        let (outcome, retryAfter) = await fetch()
        let finished = now()
        state.withLock { state in
            state.isRefreshing = false
            switch outcome {
            case .updated(let disables):
                state.interval = Self.clamp(disables.refreshInterval, timing)
                fallthrough
            case .notModified:
                state.consecutiveFailures = 0
                state.nextAllowed = finished + state.interval
            case .failed:
                state.consecutiveFailures += 1
                let exponent = Double(min(state.consecutiveFailures - 1, 30))
                state.nextAllowed = finished + min(timing.initialBackoff * pow(2, exponent), timing.maximumBackoff)
                if let retryAfter {
                    state.retryAfterUntil = finished + retryAfter
                    state.nextAllowed = max(state.nextAllowed, state.retryAfterUntil)
                }
            case .nothingEnabled, .notDue, .inProgress:
                break
            }
        }
        return outcome
    }

    /// The request's outcome, and the server's `Retry-After` in seconds when it gave one.
    private func fetch() async -> (RemoteRefreshOutcome, Double?) {
        var headers = ["Accept": "application/json"]
        if let kept = privacy.keptRemoteLayer {
            if let entityTag = Self.validator(kept.entityTag) { headers["If-None-Match"] = entityTag }
            if let lastModified = Self.validator(kept.lastModified) { headers["If-Modified-Since"] = lastModified }
        }
        let response: TransportResponse
        do {
            response = try await transport.send(TransportRequest(method: "GET", path: path, headers: headers))
        } catch {
            return (.failed("\(error)"), nil)
        }
        if response.statusCode == 304 { return (.notModified, nil) }
        // As Airship's clients: only a 200 carries remote data; any other status is a failure.
        guard response.statusCode == 200 else {
            let retryAfter = RetryAfter.delay(in: response).map { Double($0.components.seconds) }
            return (.failed("status \(response.statusCode)"), retryAfter)
        }
        do {
            let disables = try privacy.applyRemotePayload(
                response.body, entityTag: Self.validator(response.header("ETag")),
                lastModified: Self.validator(response.header("Last-Modified")))
            return (.updated(disables), nil)
        } catch .nothingEnabled {
            return (.nothingEnabled, nil)
        } catch {
            return (.failed("\(error)"), nil)
        }
    }

    /// `value`, unless it is longer than ``maximumValidatorLength`` bytes.
    private static func validator(_ value: String?) -> String? {
        value.flatMap { $0.utf8.count <= maximumValidatorLength ? $0 : nil }
    }

    private static func clamp(_ interval: Double?, _ timing: Timing) -> Double {
        max(min(interval ?? timing.defaultInterval, timing.maximumInterval), timing.minimumInterval)
    }
}
