// Shim of Apple's AdSupport (iOS 6, macOS 10.14, tvOS 9; not watchOS; visionOS has no advertising identifier) for
// scripts/check-apple-branches.sh: the declarations the package uses, with the SDK's signatures. Bodies never run.
import Foundation

/// https://developer.apple.com/documentation/adsupport/asidentifiermanager
open class ASIdentifierManager: NSObject {
    /// https://developer.apple.com/documentation/adsupport/asidentifiermanager/shared()
    open class func shared() -> ASIdentifierManager { fatalError("shim") }

    /// https://developer.apple.com/documentation/adsupport/asidentifiermanager/advertisingidentifier
    open var advertisingIdentifier: UUID { fatalError("shim") }
}
