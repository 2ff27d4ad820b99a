import FeatureGate

/// Google Consent Mode v2's four values, computed from consent, for an app to hand to Firebase or gtag itself.
///
/// FeatureGate does not link Firebase: pass ``parameters`` to `Analytics.setConsent` (mapping the keys to its
/// `ConsentType` values) or to `gtag('consent', 'update', …)`.
public struct ConsentModeSnapshot: Sendable, Hashable {
    /// One Consent Mode value.
    public enum Value: String, Sendable, Hashable {
        /// `granted`.
        case granted
        /// `denied`.
        case denied
    }

    /// `analytics_storage`: analytics may store identifiers.
    public var analyticsStorage: Value
    /// `ad_storage`: advertising may store identifiers.
    public var adStorage: Value
    /// `ad_user_data`: user data may be sent to Google for advertising.
    public var adUserData: Value
    /// `ad_personalization`: ads may be personalised.
    public var adPersonalization: Value
    /// Whether the app marked the user as a child: the advertising values are then denied, and the app should also
    /// tag its ad requests for child-directed treatment. Not one of Consent Mode's ``parameters``.
    public var isChildDirected = false

    /// Creates a snapshot.
    public init(analyticsStorage: Value, adStorage: Value, adUserData: Value, adPersonalization: Value) {
        self.analyticsStorage = analyticsStorage
        self.adStorage = adStorage
        self.adUserData = adUserData
        self.adPersonalization = adPersonalization
    }

    /// The snapshot for category statuses: analytics_storage follows `analytics`; the three advertising values
    /// follow `advertising`. Anything but `granted` is `denied`.
    public init(statuses: [ConsentCategory: ConsentStatus]) {
        self.init(decisions: statuses, tcfPurposes: nil, otherSignals: [:])
    }

    /// The snapshot for category statuses, with Google's TCF mapping for the advertising values when TCF decided
    /// (`tcfPurposes` are the purposes consented to): purpose 1 → ad_storage; purposes 1 and 7 → ad_user_data;
    /// purposes 3 and 4 → ad_personalization. Advertising that another signal (a US opt-out, or a malformed US
    /// string) does not grant still denies all three.
    init(
        decisions: [ConsentCategory: ConsentStatus], tcfPurposes: Set<Int>?,
        otherSignals: [ConsentCategory: ConsentStatus]
    ) {
        func value(_ allowed: Bool) -> Value { allowed ? .granted : .denied }
        let analytics = decisions[.analytics] == .granted
        guard let purposes = tcfPurposes else {
            let advertising = decisions[.advertising] == .granted
            self.init(
                analyticsStorage: value(analytics), adStorage: value(advertising), adUserData: value(advertising),
                adPersonalization: value(advertising))
            return
        }
        let advertisingNotRefused = otherSignals[.advertising].map { $0 == .granted } ?? true
        self.init(
            analyticsStorage: value(analytics),
            adStorage: value(advertisingNotRefused && purposes.contains(1)),
            adUserData: value(advertisingNotRefused && purposes.isSuperset(of: [1, 7])),
            adPersonalization: value(advertisingNotRefused && purposes.isSuperset(of: [3, 4])))
    }

    /// The snapshot of what consent permits now, as a `ConsentManager` judges it: analytics_storage
    /// follows whether `analytics` is permitted, the three advertising values whether `advertising` is (never while
    /// the user is marked a child and the policy makes advertising child-prohibited).
    public init(decisions: [ConsentCategory: ConsentDecision], isChild: Bool) {
        func value(_ category: ConsentCategory) -> Value {
            decisions[category]?.isPermitted == true ? .granted : .denied
        }
        let advertising = value(.advertising)
        self.init(
            analyticsStorage: value(.analytics), adStorage: advertising, adUserData: advertising,
            adPersonalization: advertising)
        isChildDirected = isChild
    }

    /// The snapshot of `consent` now: ``init(decisions:isChild:)`` with its decisions and child mark.
    public static func current(of consent: ConsentManager) async -> ConsentModeSnapshot {
        ConsentModeSnapshot(decisions: await consent.decisions, isChild: await consent.context.isChild)
    }

    /// The four values under Google's parameter names.
    public var parameters: [String: String] {
        [
            "analytics_storage": analyticsStorage.rawValue, "ad_storage": adStorage.rawValue,
            "ad_user_data": adUserData.rawValue, "ad_personalization": adPersonalization.rawValue,
        ]
    }
}
