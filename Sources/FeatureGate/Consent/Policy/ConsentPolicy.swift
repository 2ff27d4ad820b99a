/// Which features each consent category governs, under a version that changes when the terms do.
///
/// A feature that categories map is *permitted* only while every one of them allows processing: granted, or
/// unknown for a category in ``permittedUntilAsked``. Features no category maps (in the default policy: push,
/// message center, in-app automation, feature flags) are always permitted: the consent layer never touches them.
/// A grant or denial of a category also decides that category's features for the app (see ``ConsentManager``).
///
/// Bump ``version`` when what a category means changes: grants recorded under an older version then read as
/// ``ConsentStatus/unknown`` and the app is told to ask again. Denials stay denials.
///
/// A policy also says how long answers last (``grantLifetimeDays``, ``refusalLifetimeDays``), what an unanswered
/// category means where the user is (``unanswered``), which categories a child may never be asked for
/// (``childProhibited``) and which a Global Privacy Control signal refuses (``saleOrSharing``).
/// ``decision(for:answer:context:now:)`` applies all of it; the ``ConsentManager`` and `featuregate consent explain`
/// both use it. FeatureGateConfig builds a policy from a config file's `consentPolicy`.
public struct ConsentPolicy: Sendable, Hashable {
    /// The policy's version, recorded with every consent change.
    public var version: Int
    /// The features each category governs.
    public var features: [ConsentCategory: Feature]
    /// Categories that permit their features while nobody has answered (opt-out regimes, such as US state
    /// privacy laws). Empty by default: every category is opt-in. A denial or restriction always withholds.
    public var permittedUntilAsked: Set<ConsentCategory>
    /// How many whole days (of 24 hours) a grant of each category lasts; a category absent here keeps its grants
    /// until they are changed. Values below 1 are read as 1.
    public var grantLifetimeDays: [ConsentCategory: Int]
    /// How many whole days a refusal (denied or restricted) of each category lasts before the app asks again; a
    /// category absent here keeps its refusals. An expired refusal is still not permission.
    public var refusalLifetimeDays: [ConsentCategory: Int]
    /// Categories never permitted while the user is marked a child (``ConsentContext/isChild``), whatever any grant
    /// says (COPPA, GDPR article 8).
    public var childProhibited: Set<ConsentCategory>
    /// Categories that sell or share personal data: a Global Privacy Control signal refuses them when it turns on.
    public var saleOrSharing: Set<ConsentCategory>
    /// What an unanswered category means, per region. By default opt-in everywhere.
    public var unanswered: UnansweredConsentRules
    /// When a declared age range marks the user a child (``AgeSignalSource``): under 13, or declined, by default; an
    /// adult range of any declaration lifts the mark unless ``ChildAgeRule/adultRangeDeclaration`` says otherwise.
    public var childAge: ChildAgeRule

    /// Creates a policy.
    public init(
        version: Int,
        features: [ConsentCategory: Feature],
        permittedUntilAsked: Set<ConsentCategory> = [],
        grantLifetimeDays: [ConsentCategory: Int] = [:],
        refusalLifetimeDays: [ConsentCategory: Int] = [:],
        childProhibited: Set<ConsentCategory> = [],
        saleOrSharing: Set<ConsentCategory> = [],
        unanswered: UnansweredConsentRules = UnansweredConsentRules(),
        childAge: ChildAgeRule = ChildAgeRule()
    ) {
        self.version = version
        self.features = features
        self.permittedUntilAsked = permittedUntilAsked
        self.grantLifetimeDays = grantLifetimeDays
        self.refusalLifetimeDays = refusalLifetimeDays
        self.childProhibited = childProhibited
        self.saleOrSharing = saleOrSharing
        self.unanswered = unanswered
        self.childAge = childAge
    }

    /// The default mapping, version 1, every category opt-in:
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
    public var categories: [ConsentCategory] { features.keys.sortedByName() }

    /// Every feature some category governs: the features the consent layer manages.
    public var managedFeatures: Feature { features.values.reduce([]) { $0.union($1) } }

    /// Whether a category with `status` lets its features run, with no region, no child mark and no record of
    /// what expired: granted, or unknown where the category is ``permittedUntilAsked`` or the default
    /// ``unanswered`` rule is opt-out. ``decision(for:answer:context:now:)`` gives the full answer.
    public func allowsProcessing(_ status: ConsentStatus, for category: ConsentCategory) -> Bool {
        status == .granted || (status == .unknown && isOptOut(category, in: nil))
    }

    /// Whether `category` is permitted while unanswered in `region`: listed in ``permittedUntilAsked``, or the
    /// region's ``unanswered`` rule is opt-out.
    public func isOptOut(_ category: ConsentCategory, in region: ConsentRegion?) -> Bool {
        permittedUntilAsked.contains(category) || unanswered.rule(for: region) == .optOut
    }

    /// The categories that withhold `feature` under `statuses`, with their statuses; empty when it is permitted.
    ///
    /// A category missing from `statuses` is unknown.
    public func withholding(
        _ feature: Feature,
        statuses: [ConsentCategory: ConsentStatus]
    ) -> [ConsentCategory: ConsentStatus] {
        var result: [ConsentCategory: ConsentStatus] = [:]
        for (category, mapped) in features where !mapped.isDisjoint(with: feature) {
            let status = statuses[category] ?? .unknown
            if !allowsProcessing(status, for: category) { result[category] = status }
        }
        return result
    }

    /// The features of `features` that consent permits under `statuses`.
    public func permitted(_ features: Feature, statuses: [ConsentCategory: ConsentStatus]) -> Feature {
        var withheld: Feature = []
        for (category, mapped) in self.features where !allowsProcessing(statuses[category] ?? .unknown, for: category) {
            withheld.formUnion(mapped)
        }
        return features.subtracting(withheld)
    }
}
