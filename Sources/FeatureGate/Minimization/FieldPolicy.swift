/// What an event property needs before it may leave the device.
public enum FieldRequirement: Sendable, Hashable {
    /// Nothing beyond the event's own feature.
    case none
    /// These features must all be enabled.
    case feature(Feature)
    /// This consent category must be granted.
    case consent(ConsentCategory)
}

/// Tags event property keys with the feature or consent each one needs.
///
/// Keys match exactly. Keys the policy does not tag follow ``untaggedKeys``: kept by default (they need only the
/// event's own feature), or dropped for SDKs that want every field declared.
public struct FieldPolicy: Sendable, Hashable {
    /// What to do with keys the policy does not tag.
    public enum UntaggedKeys: Sendable, Hashable {
        /// Keep them: they need nothing beyond the event's feature.
        case keep
        /// Drop them: only declared fields leave the device.
        case drop
    }

    /// The requirement of each tagged key.
    public var requirements: [String: FieldRequirement]
    /// What happens to keys without a requirement.
    public var untaggedKeys: UntaggedKeys

    /// Creates a policy.
    public init(requirements: [String: FieldRequirement], untaggedKeys: UntaggedKeys = .keep) {
        self.requirements = requirements
        self.untaggedKeys = untaggedKeys
    }

    /// Advertising identifiers need advertising consent; third-party identifiers need third-party sharing.
    ///
    /// Tagged keys: `advertising_id`, `idfa`, `gaid` (advertising); `third_party_id`, `partner_user_id`
    /// (thirdPartySharing); `email`, `phone` (contacts feature).
    public static let `default` = FieldPolicy(requirements: [
        "advertising_id": .consent(.advertising),
        "idfa": .consent(.advertising),
        "gaid": .consent(.advertising),
        "third_party_id": .consent(.thirdPartySharing),
        "partner_user_id": .consent(.thirdPartySharing),
        "email": .feature(.contacts),
        "phone": .feature(.contacts),
    ])

    /// Returns a copy that also tags `key` with `requirement`.
    public func tagging(_ key: String, with requirement: FieldRequirement) -> FieldPolicy {
        var copy = self
        copy.requirements[key] = requirement
        return copy
    }
}

/// The result of sanitizing an event's properties.
public struct SanitizedProperties: Sendable, Hashable {
    /// The properties that may leave the device.
    public var properties: [String: EventValue]
    /// The keys that were stripped, sorted.
    public var removedKeys: [String]
}

/// Strips event properties the current features and consent do not allow.
///
/// A sanitizer is a snapshot: it is built from the features and consent statuses of one moment (see
/// ``init(policy:features:consent:)``) so that sanitizing is synchronous and cheap. Build a new one when consent
/// changes, or use ``ConsentManager/sanitizer(policy:)``.
public struct EventSanitizer: Sendable {
    /// The field policy applied.
    public let policy: FieldPolicy
    /// The enabled features the sanitizer was built with.
    public let features: Feature
    /// The consent statuses the sanitizer was built with; missing categories count as unknown.
    public let consent: [ConsentCategory: ConsentStatus]

    /// Creates a sanitizer for one state of the gate and of consent.
    public init(policy: FieldPolicy = .default, features: Feature, consent: [ConsentCategory: ConsentStatus]) {
        self.policy = policy
        self.features = features
        self.consent = consent
    }

    /// Whether a property with `requirement` may leave the device now.
    public func allows(_ requirement: FieldRequirement) -> Bool {
        switch requirement {
        case .none: true
        case .feature(let needed): features.isSuperset(of: needed)
        case .consent(let category): (consent[category] ?? .unknown).allowsProcessing
        }
    }

    /// Returns the properties that may leave the device, and the keys it removed.
    public func sanitize(_ properties: [String: EventValue]) -> SanitizedProperties {
        var kept: [String: EventValue] = [:]
        var removed: [String] = []
        for (key, value) in properties {
            let allowed: Bool
            if let requirement = policy.requirements[key] {
                allowed = allows(requirement)
            } else {
                allowed = policy.untaggedKeys == .keep
            }
            if allowed { kept[key] = value } else { removed.append(key) }
        }
        return SanitizedProperties(properties: kept, removedKeys: removed.sorted(byName: \.self))
    }
}

extension ConsentManager {
    /// A sanitizer for the current features and consent. A grant the policy does not permit now (the user is
    /// marked a child) reads as `restricted`, so its fields are stripped.
    public func sanitizer(policy: FieldPolicy = .default) -> EventSanitizer {
        let statuses = decisions.mapValues { $0.status == .granted && !$0.isPermitted ? .restricted : $0.status }
        return EventSanitizer(policy: policy, features: privacy.enabledFeatures, consent: statuses)
    }
}
