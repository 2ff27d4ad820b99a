import Foundation

/// Why ``TrackingConsent/requestIfNeeded()`` did or did not show the system prompt.
public enum TrackingPromptOutcome: Sendable, Hashable {
    /// The prompt was shown; the person answered with this status.
    case prompted(TrackingAuthorizationStatus)
    /// The prompt was not shown because the status was already decided (the system prompts only once).
    case alreadyDetermined(TrackingAuthorizationStatus)

    /// The status after the call.
    public var status: TrackingAuthorizationStatus {
        switch self {
        case .prompted(let status), .alreadyDetermined(let status): status
        }
    }
}

/// App Tracking Transparency, mapped onto advertising consent.
///
/// The status is recorded in the consent ledger with source ``ConsentSource/att`` whenever it changes the
/// advertising category, and the advertising identifier is handed out only while tracking is authorized.
public struct TrackingConsent: Sendable {
    /// The system (or scripted) authorizer.
    public let authorizer: any TrackingAuthorizer
    /// The consent the status is mapped onto.
    public let consent: ConsentManager

    /// Creates the mapping. Does not prompt and records nothing.
    public init(authorizer: any TrackingAuthorizer, consent: ConsentManager) {
        self.authorizer = authorizer
        self.consent = consent
    }

    /// Maps the current status onto advertising consent without prompting (call at launch and on foreground:
    /// the person can change it in Settings).
    ///
    /// - Returns: The record appended, or `nil` when advertising consent already matched.
    @discardableResult
    public func synchronize() async throws(ConsentRecordingError) -> ConsentRecord? {
        try await consent.setStatus(authorizer.status.advertisingConsent, for: .advertising, source: .att)
    }

    /// Shows the system prompt if, and only if, the status is `notDetermined`, then maps the result.
    ///
    /// The system prompt is one-shot; asking when the status is decided would do nothing visible, so this says
    /// why it did not ask instead.
    public func requestIfNeeded() async throws(ConsentRecordingError) -> TrackingPromptOutcome {
        let before = authorizer.status
        let outcome: TrackingPromptOutcome
        if before == .notDetermined {
            outcome = .prompted(await authorizer.requestAuthorization())
        } else {
            outcome = .alreadyDetermined(before)
        }
        try await consent.setStatus(outcome.status.advertisingConsent, for: .advertising, source: .att)
        return outcome
    }

    /// The advertising identifier, or `nil` unless tracking is authorized. Never the all-zero UUID.
    public var advertisingIdentifier: UUID? {
        guard authorizer.status == .authorized, let identifier = authorizer.rawAdvertisingIdentifier else {
            return nil
        }
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        return identifier == zero ? nil : identifier
    }
}
