// The system adapter for Apple's Declared Age Range framework (iOS 26, macOS 26): empty where the framework does
// not exist (Linux, older SDKs). The logic lives behind `AgeSignalSource` and `ChildAgeRule` in FeatureGate, which
// Linux tests drive; this file only turns the system's answer into an `AgeRangeAnswer`.
//
// Using it needs the com.apple.developer.declared-age-range entitlement (the Declared Age Range capability).
#if canImport(DeclaredAgeRange)
import DeclaredAgeRange
import FeatureGate

@available(iOS 26, macOS 26, *)
extension AgeRangeAnswer {
    /// The answer an `AgeRangeService` response gives: the shared range's bounds, or ``AgeRangeAnswer/declined``.
    /// A response this version does not know reads as declined, which the policy counts as a child by default.
    public init(_ response: AgeRangeService.Response) {
        switch response {
        case .declinedSharing: self = .declined
        case .sharing(let range): self = .range(lowerBound: range.lowerBound, upperBound: range.upperBound)
        @unknown default: self = .declined
        }
    }
}

#if canImport(UIKit)
import UIKit

@available(iOS 26, macOS 26, *)
extension AgeSignalSource {
    /// Asks the system for the user's age range, with the policy's child age as the age gate, and applies the answer
    /// (``AgeSignalSource/apply(_:)``): the child mark follows it and holds across launches until the next answer.
    ///
    /// - Parameter viewController: Where the system presents its sheet.
    /// - Returns: Whether the answer marks the user as a child.
    /// - Throws: The framework's error (the entitlement is missing, the service is unavailable): nothing is applied
    ///   and the mark stays what it was; or an ``AgeRangeAnswerStoreError`` when the answer could not be kept.
    @MainActor
    public func requestAgeRange(in viewController: UIViewController) async throws -> Bool {
        let gate = consentManager.policy.childAge.childUnderAge
        let response = try await AgeRangeService.shared.requestAgeRange(ageGates: gate, in: viewController)
        return try await apply(AgeRangeAnswer(response))
    }
}
#endif
#endif
