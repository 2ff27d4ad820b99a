// Shim of Apple's AppTrackingTransparency (iOS 14, macOS 11, tvOS 14, visionOS 1; not watchOS) for
// scripts/check-apple-branches.sh: the declarations the package uses, with the SDK's signatures. Bodies never run.
import Foundation

/// https://developer.apple.com/documentation/apptrackingtransparency/attrackingmanager
open class ATTrackingManager: NSObject {
    /// https://developer.apple.com/documentation/apptrackingtransparency/attrackingmanager/authorizationstatus-swift.enum
    public enum AuthorizationStatus: UInt, @unchecked Sendable {
        case notDetermined = 0
        case restricted = 1
        case denied = 2
        case authorized = 3
    }

    /// https://developer.apple.com/documentation/apptrackingtransparency/attrackingmanager/trackingauthorizationstatus
    open class var trackingAuthorizationStatus: AuthorizationStatus { fatalError("shim") }

    /// https://developer.apple.com/documentation/apptrackingtransparency/attrackingmanager/requesttrackingauthorization(completionhandler:)
    /// The completion handler may be called on any queue: the SDK declares it `@Sendable`.
    open class func requestTrackingAuthorization(
        completionHandler completion: @escaping @Sendable (AuthorizationStatus) -> Void
    ) { fatalError("shim") }

    /// https://developer.apple.com/documentation/apptrackingtransparency/attrackingmanager/requesttrackingauthorization()
    open class func requestTrackingAuthorization() async -> AuthorizationStatus { fatalError("shim") }
}
