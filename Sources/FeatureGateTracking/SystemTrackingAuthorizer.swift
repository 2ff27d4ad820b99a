// The only code in the package that imports AppTrackingTransparency or AdSupport, in its own product, so an app
// links them only when it adds FeatureGateTracking. Where App Tracking Transparency does not exist (Linux,
// watchOS) this module is empty.
#if canImport(AppTrackingTransparency)
import AppTrackingTransparency
import FeatureGate
import Foundation
#if canImport(AdSupport) && !os(visionOS)
import AdSupport
#endif

/// App Tracking Transparency (and AdSupport, where the platform has it) as a `TrackingAuthorizer`.
///
/// Every status is the system's, mapped case for case; an unknown future case maps to `denied`. The system
/// answers a request made while the app is not active with `notDetermined` without showing the prompt: this
/// adapter returns that answer as it is, and `TrackingConsent` decides what it means.
public struct SystemTrackingAuthorizer: TrackingAuthorizer {
    /// Creates the adapter. It holds no state.
    public init() {}

    /// `ATTrackingManager.trackingAuthorizationStatus`. Reading it never prompts.
    public var status: TrackingAuthorizationStatus {
        Self.map(ATTrackingManager.trackingAuthorizationStatus)
    }

    /// `ATTrackingManager.requestTrackingAuthorization`, called on the main actor, since the system reads the
    /// application state to decide whether it may show the prompt.
    public func requestAuthorization() async -> TrackingAuthorizationStatus {
        Self.map(await Self.requestOnMainActor())
    }

    /// Whether the main bundle's `Info.plist` has a non-empty `NSUserTrackingUsageDescription`.
    public var hasUsageDescription: Bool {
        let description = Bundle.main.object(forInfoDictionaryKey: "NSUserTrackingUsageDescription") as? String
        return !(description ?? "").isEmpty
    }

    /// `ASIdentifierManager.shared().advertisingIdentifier`: all zeros unless tracking is authorized. `nil` where
    /// AdSupport is not available (visionOS).
    public var rawAdvertisingIdentifier: UUID? {
        #if canImport(AdSupport) && !os(visionOS)
        ASIdentifierManager.shared().advertisingIdentifier
        #else
        nil
        #endif
    }

    @MainActor
    private static func requestOnMainActor() async -> ATTrackingManager.AuthorizationStatus {
        // The continuation's body runs here, on the main actor. The completion handler may run on any queue, so
        // it is @Sendable: not main-actor isolated, and so never checked against the main actor at run time.
        await withCheckedContinuation { continuation in
            ATTrackingManager.requestTrackingAuthorization { @Sendable status in
                continuation.resume(returning: status)
            }
        }
    }

    private static func map(_ status: ATTrackingManager.AuthorizationStatus) -> TrackingAuthorizationStatus {
        switch status {
        case .authorized: .authorized
        case .denied: .denied
        case .restricted: .restricted
        case .notDetermined: .notDetermined
        @unknown default: .denied
        }
    }
}
#endif
