/// App Tracking Transparency's authorization status, without depending on Apple's framework.
///
/// The cases match `ATTrackingManager.AuthorizationStatus`, so the live adapter maps one-to-one.
public enum TrackingAuthorizationStatus: String, Sendable, Hashable, CaseIterable {
    /// The person has not been asked. The system prompt can still be shown, once.
    case notDetermined
    /// Tracking is restricted (parental controls, a managed device): the person cannot grant it.
    case restricted
    /// The person refused.
    case denied
    /// The person agreed.
    case authorized

    /// The advertising consent this status stands for.
    ///
    /// | status | advertising consent |
    /// |---|---|
    /// | notDetermined | unknown |
    /// | restricted | restricted |
    /// | denied | denied |
    /// | authorized | granted |
    public var advertisingConsent: ConsentStatus {
        switch self {
        case .notDetermined: .unknown
        case .restricted: .restricted
        case .denied: .denied
        case .authorized: .granted
        }
    }
}
