// Shim of Apple's UIKit (iOS, iPadOS, Mac Catalyst, tvOS, visionOS) for scripts/check-apple-branches.sh: the
// declarations the package uses, with the SDK's signatures. Bodies never run.
import Foundation

/// https://developer.apple.com/documentation/uikit/uiviewcontroller
@MainActor
open class UIViewController: NSObject {}
