// The system adapter for Apple's Declared Age Range framework (iOS 26, macOS 26): empty where the framework does
// not exist (Linux, older SDKs). The logic lives behind `AgeSignalSource` and `ChildAgeRule` in FeatureGate, which
// Linux tests drive; this file only turns the system's answers into FeatureGate's values.
//
// Using it needs the com.apple.developer.declared-age-range entitlement (the Declared Age Range capability). A parent
// who later revokes the app's access reaches the app's server through an App Store Server Notification (see the
// FeatureGate documentation, "Consent lifetimes, regions and children"), not through this adapter.
//
// Apple's types are read as their documentation pages show them: not `Sendable`, nonisolated. The response is turned
// into a `Sendable` `AgeRangeAnswer` in the same nonisolated context that received it, so nothing of Apple's crosses
// an isolation boundary whichever way the SDK declares them.
#if canImport(DeclaredAgeRange)
import DeclaredAgeRange
import FeatureGate

@available(iOS 26, macOS 26, *)
extension AgeRangeAnswer {
    /// The answer an `AgeRangeService` response gives: the shared range's bounds, how it was declared and the
    /// parental controls active, or ``AgeRangeAnswer/declined``. A response this version does not know reads as
    /// declined, which the policy counts as a child by default.
    public init(_ response: AgeRangeService.Response) {
        switch response {
        case .declinedSharing:
            self = .declined
        case .sharing(let range):
            self = .range(
                lowerBound: range.lowerBound, upperBound: range.upperBound,
                declaration: AgeRangeDeclaration(range.ageRangeDeclaration),
                parentalControls: AgeRangeParentalControls(range.activeParentalControls))
        @unknown default:
            self = .declined
        }
    }
}

@available(iOS 26, macOS 26, *)
extension AgeRangeDeclaration {
    /// The kind Apple reports; none, or one this version does not know, is ``AgeRangeDeclaration/unspecified``
    /// (the least trusted kind).
    public init(_ declaration: AgeRangeService.AgeRangeDeclaration?) {
        switch declaration {
        case nil: self = .unspecified
        case .selfDeclared?: self = .selfDeclared
        case .guardianDeclared?: self = .guardianDeclared
        // The checked kinds came with iOS 26.2 (confirmed with 26.5): each is matched only where it exists.
        case let other?:
            if #available(iOS 26.2, macOS 26.2, *) {
                self = Self.checked(other)
            } else {
                self = .unspecified
            }
        }
    }

    @available(iOS 26.2, macOS 26.2, *)
    private static func checked(_ declaration: AgeRangeService.AgeRangeDeclaration) -> AgeRangeDeclaration {
        switch declaration {
        case .checkedByOtherMethod: return .checkedByOtherMethod
        case .governmentIDChecked: return .governmentIDChecked
        case .guardianPaymentChecked: return .guardianPaymentChecked
        case .selfDeclared: return .selfDeclared
        case .guardianDeclared: return .guardianDeclared
        case .confirmed:
            if #available(iOS 26.5, macOS 26.5, *) { return .confirmed }
            return .unspecified
        @unknown default: return .unspecified
        }
    }
}

@available(iOS 26, macOS 26, *)
extension AgeRangeParentalControls {
    /// The controls Apple reports, by name; any control this version does not name adds
    /// ``AgeRangeParentalControls/unrecognized``.
    public init(_ controls: AgeRangeService.ParentalControls) {
        var known: AgeRangeService.ParentalControls = [.communicationLimits]
        self = controls.contains(.communicationLimits) ? .communicationLimits : []
        if #available(iOS 26.2, macOS 26.2, *) {
            known.insert(.significantAppChangeApprovalRequired)
            if controls.contains(.significantAppChangeApprovalRequired) {
                insert(.significantAppChangeApprovalRequired)
            }
        }
        if !controls.subtracting(known).isEmpty { insert(.unrecognized) }
    }
}

/// Whether the law of the user's region requires the app to ask for an age range, as the system answers it.
public enum AgeRangeRequirement: Sendable, Hashable {
    /// The region requires it (`requiredRegulatoryFeatures` contains `declaredAgeRangeRequired`, or, before
    /// iOS 26.4, `isEligibleForAgeFeatures` is `true`).
    case required
    /// The region does not require it: asking is the app's choice.
    case notRequired
    /// The system cannot say (before iOS 26.2): the app decides, as before these APIs.
    case unknown
}

@available(iOS 26, macOS 26, *)
extension AgeRangeRequirement {
    /// Asks the system whether the user's region requires an age range: `requiredRegulatoryFeatures` where it exists
    /// (iOS 26.4, macOS 26.4), `isEligibleForAgeFeatures` otherwise (iOS 26.2, macOS 26.2), ``unknown`` before.
    ///
    /// - Throws: The framework's error (the entitlement is missing, the service is unavailable).
    public static func current() async throws -> AgeRangeRequirement {
        if #available(iOS 26.4, macOS 26.4, *) {
            let features = try await AgeRangeService.shared.requiredRegulatoryFeatures
            return features.contains(.declaredAgeRangeRequired) ? .required : .notRequired
        }
        if #available(iOS 26.2, macOS 26.2, *) {
            return try await AgeRangeService.shared.isEligibleForAgeFeatures ? .required : .notRequired
        }
        return .unknown
    }
}

#if canImport(UIKit)
import UIKit

@available(iOS 26, macOS 26, *)
extension AgeSignalSource {
    /// Asks the system for the user's age range, with the policy's child age as the age gate, and applies the answer
    /// (``AgeSignalSource/apply(_:)``): the child mark follows it and holds across launches until the next answer.
    ///
    /// Ask where ``AgeRangeRequirement/current()`` says the region requires it (or where the app wants to).
    ///
    /// - Parameter viewController: Where the system presents its sheet.
    /// - Returns: Whether the answer marks the user as a child.
    /// - Throws: The framework's error (the entitlement is missing, the service is unavailable): nothing is applied
    ///   and the mark stays what it was; or an ``AgeRangeAnswerStoreError`` when the answer could not be kept.
    public nonisolated func requestAgeRange(in viewController: UIViewController) async throws -> Bool {
        let gate = consentManager.policy.childAge.childUnderAge
        let response = try await AgeRangeService.shared.requestAgeRange(ageGates: gate, in: viewController)
        return try await apply(AgeRangeAnswer(response))
    }
}
#endif
#endif
