/// Which features each consent category unlocks, under a version that changes when the terms do.
///
/// Granting a category enables its features; any other status disables them. Features no category maps (in
/// the default policy: push, message center, in-app automation, feature flags) are left to the app: the
/// consent layer never touches them.
///
/// Bump ``version`` when what a category means changes: grants recorded under an older version then read as
/// ``ConsentStatus/unknown`` and the app is told to ask again. Denials stay denials.
public struct ConsentPolicy: Sendable, Hashable {
    /// The policy's version, recorded with every consent change.
    public var version: Int
    /// The features each category unlocks.
    public var features: [ConsentCategory: Feature]

    /// Creates a policy.
    public init(version: Int, features: [ConsentCategory: Feature]) {
        self.version = version
        self.features = features
    }

    /// The default mapping, version 1:
    ///
    /// | category | features |
    /// |---|---|
    /// | analytics | analytics, tags and attributes |
    /// | advertising | none: it gates advertising identifiers and fields (see ``FieldPolicy``) |
    /// | thirdPartySharing | contacts |
    public static let `default` = ConsentPolicy(
        version: 1,
        features: [
            .analytics: [.analytics, .tagsAndAttributes],
            .advertising: [],
            .thirdPartySharing: .contacts,
        ]
    )

    /// The categories of the policy, sorted by name.
    public var categories: [ConsentCategory] { features.keys.sorted() }

    /// Every feature some category unlocks: the features the consent layer manages.
    public var managedFeatures: Feature { features.values.reduce([]) { $0.union($1) } }
}
