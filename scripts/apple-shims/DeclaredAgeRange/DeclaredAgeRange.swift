// Shim of Apple's Declared Age Range (iOS 26, iPadOS 26, Mac Catalyst 26, macOS 26) for
// scripts/check-apple-branches.sh: the declarations FeatureGateAgeRange uses, with the SDK's signatures. Bodies never
// run.
//
// Each declaration names its documentation page. Where a page is silent about `Sendable` or isolation (none of these
// pages lists a `Sendable` conformance or `@MainActor`, as of the pages read on 2026-11-28), the shim takes the
// stricter reading: not `Sendable`, nonisolated. Code that compiles against this compiles whichever way the SDK
// declares them, so the check cannot pass what Apple's compiler would refuse. Availability is the pages' (the
// `availability` block of each); scripts/apple-api-availability.tsv repeats it for scripts/check-availability.py.
import UIKit  // the iOS method's view controller (this shim's `dependencies`)

/// https://developer.apple.com/documentation/declaredagerange/agerangeservice
/// (`struct AgeRangeService`; no conformances listed: not `Sendable` here)
@available(iOS 26.0, macOS 26.0, *)
public struct AgeRangeService {
    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/shared
    /// (`static let shared: AgeRangeService`; a global of a non-`Sendable` type is an error in Swift 6 mode, so the
    /// shim marks it `nonisolated(unsafe)`: what the SDK's declaration means to callers, a nonisolated global)
    nonisolated(unsafe) public static let shared = AgeRangeService()

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/response
    /// (`enum Response`; no conformances listed)
    public enum Response {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/response/declinedsharing
        case declinedSharing
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/response/sharing(range:)
        case sharing(range: AgeRangeService.AgeRange)
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange
    /// (`struct AgeRange`; no conformances listed)
    public struct AgeRange {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange/lowerbound
        public var lowerBound: Int? { fatalError("shim") }
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange/upperbound
        public var upperBound: Int? { fatalError("shim") }
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange/agerangedeclaration
        /// (`var ageRangeDeclaration: AgeRangeService.AgeRangeDeclaration?`)
        public var ageRangeDeclaration: AgeRangeService.AgeRangeDeclaration? { fatalError("shim") }
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerange/activeparentalcontrols
        /// (`var activeParentalControls: AgeRangeService.ParentalControls`)
        public var activeParentalControls: AgeRangeService.ParentalControls { fatalError("shim") }
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration
    /// (`enum AgeRangeDeclaration`; no conformances listed). Cases: the ones whose pages were found; the enum is not
    /// frozen, so a `switch` over it needs `@unknown default`.
    public enum AgeRangeDeclaration {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration/selfdeclared
        case selfDeclared
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration/guardiandeclared
        case guardianDeclared
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration/checkedbyothermethod
        @available(iOS 26.2, macOS 26.2, *)
        case checkedByOtherMethod
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration/governmentidchecked
        @available(iOS 26.2, macOS 26.2, *)
        case governmentIDChecked
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration/guardianpaymentchecked
        @available(iOS 26.2, macOS 26.2, *)
        case guardianPaymentChecked
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/agerangedeclaration/confirmed
        @available(iOS 26.5, macOS 26.5, *)
        case confirmed
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/parentalcontrols
    /// (`struct ParentalControls`, an option set; no `Sendable` listed)
    public struct ParentalControls: OptionSet {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/parentalcontrols/rawvalue
        public let rawValue: Int
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/parentalcontrols/init(rawvalue:)
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/parentalcontrols/communicationlimits
        /// (a `static let` of a non-`Sendable` type: `nonisolated(unsafe)` here, as `shared`)
        nonisolated(unsafe) public static let communicationLimits = ParentalControls(rawValue: 1)
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/parentalcontrols/significantappchangeapprovalrequired
        /// (iOS 26.2, deprecated in 26.4)
        @available(iOS, introduced: 26.2, deprecated: 26.4)
        @available(macOS, introduced: 26.2, deprecated: 26.4)
        nonisolated(unsafe) public static let significantAppChangeApprovalRequired = ParentalControls(rawValue: 2)
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/regulatoryfeature
    /// (`enum RegulatoryFeature`, iOS 26.4; no conformances listed, but it is the element of a `Set`, so `Hashable`)
    @available(iOS 26.4, macOS 26.4, *)
    public enum RegulatoryFeature: Hashable {
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/regulatoryfeature/declaredagerangerequired
        case declaredAgeRangeRequired
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/regulatoryfeature/significantappchangerequiresadultnotification
        case significantAppChangeRequiresAdultNotification
        /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/regulatoryfeature/significantappchangerequiresparentalconsent
        case significantAppChangeRequiresParentalConsent
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/iseligibleforagefeatures
    /// (`var isEligibleForAgeFeatures: Bool { get async throws }`, iOS 26.2; nonisolated)
    @available(iOS 26.2, macOS 26.2, *)
    public var isEligibleForAgeFeatures: Bool { get async throws { fatalError("shim") } }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/requiredregulatoryfeatures
    /// (`var requiredRegulatoryFeatures: Set<AgeRangeService.RegulatoryFeature> { get async throws }`, iOS 26.4;
    /// nonisolated)
    @available(iOS 26.4, macOS 26.4, *)
    public var requiredRegulatoryFeatures: Set<AgeRangeService.RegulatoryFeature> {
        get async throws { fatalError("shim") }
    }

    /// https://developer.apple.com/documentation/declaredagerange/agerangeservice/requestagerange(agegates:_:_:in:)-2go8c
    /// (iOS, iPadOS, Mac Catalyst; macOS has the same method taking an `NSWindow`, -4yo3r). The page shows no
    /// `@MainActor`: nonisolated here.
    public func requestAgeRange(
        ageGates threshold1: Int, _ threshold2: Int? = nil, _ threshold3: Int? = nil,
        in viewController: UIViewController
    ) async throws -> AgeRangeService.Response { fatalError("shim") }
}
