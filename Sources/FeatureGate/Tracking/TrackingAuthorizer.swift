import Foundation

/// Asks the system whether the app may track, and reads the advertising identifier.
///
/// The live implementation, `SystemTrackingAuthorizer`, wraps App Tracking Transparency and AdSupport on Apple
/// platforms; it lives in the `FeatureGateTracking` product, so only apps that track link those frameworks.
/// Tests and the demo use ``ScriptedTrackingAuthorizer``. Most code should go through
/// ``TrackingConsent``, which maps the status onto advertising consent and guards the identifier.
public protocol TrackingAuthorizer: Sendable {
    /// The current status. Reading it never prompts.
    var status: TrackingAuthorizationStatus { get }

    /// Shows the system prompt and returns the resulting status.
    ///
    /// The system shows the prompt at most once per install; later calls return the status without prompting.
    func requestAuthorization() async -> TrackingAuthorizationStatus

    /// The raw advertising identifier, which may be all zeros when tracking is not authorized.
    var rawAdvertisingIdentifier: UUID? { get }

    /// Whether the app declares why it asks (`NSUserTrackingUsageDescription` in its `Info.plist`, not empty).
    ///
    /// Without it the system terminates the app when it asks, so ``TrackingConsent/requestIfNeeded()`` does not
    /// ask. The default implementation answers `true`.
    var hasUsageDescription: Bool { get }
}

extension TrackingAuthorizer {
    /// `true`: an authorizer that cannot tell is assumed to have its usage description.
    public var hasUsageDescription: Bool { true }
}

/// A tracking authorizer that answers from a script: for tests and demos on any platform.
///
/// It behaves like the system: ``requestAuthorization()`` changes the status only from `notDetermined`, and
/// counts how often it was called, so a test can prove the app never prompts twice.
public final class ScriptedTrackingAuthorizer: TrackingAuthorizer {
    private struct State {
        var status: TrackingAuthorizationStatus
        var answer: TrackingAuthorizationStatus
        var requests = 0
    }

    private let state: LockedValue<State>
    /// The identifier returned while authorized; all zeros otherwise, as the system does.
    public let advertisingIdentifier: UUID

    /// Whether the scripted app declares `NSUserTrackingUsageDescription`.
    public let hasUsageDescription: Bool

    /// Creates an authorizer at `status` that answers a prompt with `answer`, for an app that declares
    /// `NSUserTrackingUsageDescription` unless `hasUsageDescription` is `false`.
    public init(
        status: TrackingAuthorizationStatus = .notDetermined,
        answer: TrackingAuthorizationStatus = .denied,
        advertisingIdentifier: UUID = UUID(),
        hasUsageDescription: Bool = true
    ) {
        state = LockedValue(State(status: status, answer: answer))
        self.advertisingIdentifier = advertisingIdentifier
        self.hasUsageDescription = hasUsageDescription
    }

    /// The scripted status.
    public var status: TrackingAuthorizationStatus {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    /// How many times ``requestAuthorization()`` was called.
    public var requestCount: Int { state.withLock { $0.requests } }

    /// Answers with the scripted answer if the status is `notDetermined`; otherwise returns the status.
    public func requestAuthorization() async -> TrackingAuthorizationStatus {
        state.withLock { state in
            state.requests += 1
            if state.status == .notDetermined { state.status = state.answer }
            return state.status
        }
    }

    /// The identifier while authorized, all zeros otherwise.
    public var rawAdvertisingIdentifier: UUID? {
        status == .authorized ? advertisingIdentifier : .allZeros
    }
}

extension UUID {
    /// What the system hands out instead of an advertising identifier it withholds.
    static let allZeros = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
