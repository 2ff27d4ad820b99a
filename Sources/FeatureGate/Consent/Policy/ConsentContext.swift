import Foundation

/// What the app knows about the user right now, beyond their answers: where they are, whether they are a child,
/// and whether a Global Privacy Control signal is on.
///
/// Only the app sets these (``ConsentManager/setRegion(_:)``, ``ConsentManager/setChild(_:)``,
/// ``ConsentManager/applyGlobalPrivacyControl(_:)``); outside consent sources can neither set nor clear the child
/// mark.
public struct ConsentContext: Sendable, Hashable {
    /// Where the user is, or `nil` when the app does not know (only the policy's default rule applies).
    public var region: ConsentRegion?
    /// Whether the app marked the user as a child.
    public var isChild: Bool
    /// Whether a Global Privacy Control signal is on.
    public var isGlobalPrivacyControlOn: Bool

    /// Creates a context; by default nothing is known.
    public init(region: ConsentRegion? = nil, isChild: Bool = false, isGlobalPrivacyControlOn: Bool = false) {
        self.region = region
        self.isChild = isChild
        self.isGlobalPrivacyControlOn = isGlobalPrivacyControlOn
    }
}
