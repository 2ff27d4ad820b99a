import FeatureGate

/// Which TCF purposes each FeatureGate consent category needs: a table the app can replace.
///
/// Each category lists requirements; every requirement must be met, and a requirement is met by any one of its
/// purposes. A purpose counts when the user consented to it, or, for purposes TCF v2.2 lets rest on legitimate
/// interest (never 1 or 3–6, see `TCString.consentOnlyPurposes`), when the user did not object.
///
/// The default table:
///
/// | category | needs |
/// |---|---|
/// | analytics | purpose 1, and purpose 8 or 9 |
/// | advertising | purposes 1, 3, 4 and 7 |
/// | thirdPartySharing | purpose 1, and consent for every vendor in ``sharingVendorIDs``; decided only when the app lists some |
public struct TCFPurposeMapping: Sendable, Hashable {
    /// For each category, the requirements; each requirement is a set of purposes, any one of which meets it.
    public var requirements: [ConsentCategory: [Set<Int>]]
    /// Categories that TCF decides only when ``sharingVendorIDs`` is not empty, and then only with consent for
    /// every one of those vendors.
    public var vendorSharingCategories: Set<ConsentCategory>
    /// The IAB vendor IDs the app shares personal data with.
    public var sharingVendorIDs: Set<Int>

    /// Creates a table.
    public init(
        requirements: [ConsentCategory: [Set<Int>]],
        vendorSharingCategories: Set<ConsentCategory> = [.thirdPartySharing],
        sharingVendorIDs: Set<Int> = []
    ) {
        self.requirements = requirements
        self.vendorSharingCategories = vendorSharingCategories
        self.sharingVendorIDs = sharingVendorIDs
    }

    /// The default table (see the type's documentation), with no sharing vendors.
    public static let `default` = TCFPurposeMapping(
        requirements: [
            .analytics: [[1], [8, 9]],
            .advertising: [[1], [3], [4], [7]],
            .thirdPartySharing: [[1]],
        ]
    )

    /// The default table, with the vendors the app shares with.
    public static func `default`(sharingWith vendorIDs: Set<Int>) -> TCFPurposeMapping {
        var mapping = TCFPurposeMapping.default
        mapping.sharingVendorIDs = vendorIDs
        return mapping
    }

    /// The categories the table decides for: those with requirements, except vendor-sharing categories while no
    /// sharing vendor is listed.
    public var decidedCategories: [ConsentCategory] {
        requirements.keys.filter { !vendorSharingCategories.contains($0) || !sharingVendorIDs.isEmpty }.sorted()
    }
}

/// Whose processing the TCF signals are read for.
public enum TCFSubject: Sendable, Hashable, CustomStringConvertible {
    /// The app's own processing: the publisher keys (`IABTCF_PublisherConsent`…) and the publisher-TC segment.
    case publisher
    /// An SDK registered as an IAB vendor: the purpose keys, gated by that vendor's consent bits and the
    /// publisher's restrictions.
    case vendor(Int)

    /// `publisher` or `vendor N`.
    public var description: String {
        switch self {
        case .publisher: "publisher"
        case .vendor(let id): "vendor \(id)"
        }
    }
}
