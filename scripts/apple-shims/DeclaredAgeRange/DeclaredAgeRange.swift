// Shim of Apple's Declared Age Range (iOS 26, iPadOS 26, Mac Catalyst 26, macOS 26) for
// scripts/check-apple-branches.sh: the declarations FeatureGateAgeRange uses, with the SDK's signatures. Bodies never
// run.
import UIKit  // the iOS method's view controller (this shim's `dependencies`)

/// https://developer.apple.com/documentation/declaredagerange/agerangeservice
@available(iOS 26.0, macOS 26.0, *)
public struct AgeRangeService: Sendable {
    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/shared
    public static let shared = AgeRangeService()

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/response
    public enum Response: Sendable, Equatable {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/response/declinedsharing
        case declinedSharing
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/response/sharing(range:)
        case sharing(range: AgeRangeService.AgeRange)
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange
    public struct AgeRange: Sendable, Equatable {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange/lowerbound
        public var lowerBound: Int? { fatalError("shim") }
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange/upperbound
        public var upperBound: Int? { fatalError("shim") }
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/requestagerange(agegates:_:_:in:)-2go8c
    /// (iOS, iPadOS, Mac Catalyst; macOS has the same method taking an `NSWindow`).
    @MainActor
    public func requestAgeRange(
        ageGates threshold1: Int, _ threshold2: Int? = nil, _ threshold3: Int? = nil,
        in viewController: UIViewController
    ) async throws -> AgeRangeService.Response { fatalError("shim") }
}
