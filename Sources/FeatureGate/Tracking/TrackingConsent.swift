import Foundation

/// Why ``TrackingConsent/requestIfNeeded()`` did or did not show the system prompt.
public enum TrackingPromptOutcome: Sendable, Hashable {
    /// The prompt was shown; the person answered with this status.
    case prompted(TrackingAuthorizationStatus)
    /// The prompt was not shown because the status was already decided (the system prompts only once).
    case alreadyDetermined(TrackingAuthorizationStatus)
    /// The system showed nothing and the status is still `notDetermined`: it does that when the app is not
    /// active. Nothing was decided; ask again once the app is active.
    case notShown
    /// The prompt was not requested because the app's `Info.plist` has no `NSUserTrackingUsageDescription` (the
    /// system would terminate the app). The status stays `notDetermined`; add the key, then ask again.
    case missingUsageDescription

    /// The status after the call.
    public var status: TrackingAuthorizationStatus {
        switch self {
        case .prompted(let status), .alreadyDetermined(let status): status
        case .notShown, .missingUsageDescription: .notDetermined
        }
    }
}

/// App Tracking Transparency, mapped onto advertising consent.
///
/// ATT is a source of advertising consent only when its status *changes*: the consent manager keeps the last
/// status ATT decided (derived from the ledger's ``ConsentSource/att`` records), and an unchanged status, read on
/// every foreground, decides nothing. So a person who says no in the app's own consent screen stays at no while
/// ATT stays authorized, and a later change in Settings is still honoured. Each decision is recorded with source
/// ``ConsentSource/att``. The advertising identifier is handed out only while ATT is authorized **and**
/// advertising consent is granted.
public struct TrackingConsent: Sendable {
    /// The system (or scripted) authorizer.
    public let authorizer: any TrackingAuthorizer
    /// The consent the status is mapped onto.
    public let consent: ConsentManager
    /// The prompt under way, shared by this value's copies, so concurrent requests wait for one prompt.
    private let pendingPrompt = LockedValue<Task<TrackingAuthorizationStatus, Never>?>(nil)

    /// Creates the mapping. Does not prompt and records nothing.
    public init(authorizer: any TrackingAuthorizer, consent: ConsentManager) {
        self.authorizer = authorizer
        self.consent = consent
    }

    /// Maps the current status onto advertising consent, if it changed since ATT last decided, without prompting
    /// (call at launch and on foreground: the person can change it in Settings).
    ///
    /// - Returns: The record appended (one that only confirms the status advertising consent already had, when it
    ///   matched), or `nil` when the ATT status did not change since ATT last decided, even in an earlier run.
    @discardableResult
    public func synchronize() async throws(ConsentRecordingError) -> ConsentRecord? {
        try await consent.applyAnswer(authorizer.status.advertisingConsent, for: .advertising, source: .att)
    }

    /// Shows the system prompt if, and only if, the status is `notDetermined`, then maps a changed status.
    ///
    /// The system prompt is one-shot; asking when the status is decided would do nothing visible, so this says
    /// why it did not ask instead. When the system returns `notDetermined` without showing anything (the app was
    /// not active), the outcome is ``TrackingPromptOutcome/notShown`` and nothing is decided. When the app
    /// declares no `NSUserTrackingUsageDescription` (``TrackingAuthorizer/hasUsageDescription``), it does not ask
    /// (the system would terminate the app) and answers ``TrackingPromptOutcome/missingUsageDescription``.
    ///
    /// Calls made while a prompt is on screen (from this value or its copies) wait for that prompt and share its
    /// answer: the system is asked once.
    public func requestIfNeeded() async throws(ConsentRecordingError) -> TrackingPromptOutcome {
        let outcome = await promptIfNeeded()
        try await consent.applyAnswer(outcome.status.advertisingConsent, for: .advertising, source: .att)
        return outcome
    }

    private func promptIfNeeded() async -> TrackingPromptOutcome {
        let authorizer = authorizer
        let prompt = pendingPrompt.withLock { pending -> Task<TrackingAuthorizationStatus, Never>? in
            if let pending { return pending }
            guard authorizer.status == .notDetermined, authorizer.hasUsageDescription else { return nil }
            let prompt = Task { await authorizer.requestAuthorization() }
            pending = prompt
            return prompt
        }
        guard let prompt else {
            let status = authorizer.status
            return status == .notDetermined ? .missingUsageDescription : .alreadyDetermined(status)
        }
        let answer = await prompt.value
        pendingPrompt.withLock { pending in
            if pending == prompt { pending = nil }
        }
        return answer == .notDetermined ? .notShown : .prompted(answer)
    }

    /// The advertising identifier, or `nil` unless ATT is authorized and advertising consent is granted and
    /// permitted (never while the user is marked a child and the policy makes advertising child-prohibited). Never
    /// the all-zero UUID.
    public var advertisingIdentifier: UUID? {
        get async {
            let advertising = await consent.decision(for: .advertising)
            guard authorizer.status == .authorized, advertising.status == .granted, advertising.isPermitted,
                let identifier = authorizer.rawAdvertisingIdentifier
            else { return nil }
            return identifier == .allZeros ? nil : identifier
        }
    }
}
