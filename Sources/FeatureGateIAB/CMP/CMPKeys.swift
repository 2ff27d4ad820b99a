/// A value a consent management platform wrote under one of the IAB's keys: a number or a string.
public enum CMPValue: Sendable, Hashable, CustomStringConvertible {
    /// A number, as CMPs write `IABTCF_gdprApplies`.
    case number(Int)
    /// A string, as CMPs write every other key.
    case string(String)

    /// The value as written: the number, or the string in quotes.
    public var description: String {
        switch self {
        case .number(let number): "\(number)"
        case .string(let string): "\"\(string)\""
        }
    }
}

/// Where a CMP's answer is read from: `UserDefaults` on Apple platforms, any dictionary elsewhere.
///
/// Implementations return what is stored under `key` right now, or `nil` when nothing is; they must be safe to call
/// from any thread.
public protocol CMPKeyValueSource: Sendable {
    /// The value stored under `key`, or `nil`.
    func cmpValue(forKey key: String) -> CMPValue?

    /// Whether the keys can be read now. `false` while an iOS device is locked and the defaults are protected:
    /// every key then reads as absent, which is not the CMP's answer, so a refresh applies nothing. The default
    /// implementation answers `true`.
    var isReadable: Bool { get }
}

extension CMPKeyValueSource {
    /// `true`: a source that cannot tell is always readable.
    public var isReadable: Bool { true }
}

/// A dictionary of CMP values is a key-value source (on every platform; the one to use on Linux and in tests).
extension Dictionary: CMPKeyValueSource where Key == String, Value == CMPValue {
    /// The value stored under `key`, or `nil`.
    public func cmpValue(forKey key: String) -> CMPValue? { self[key] }
}

/// The IAB keys FeatureGate reads, as CMPs write them (IAB TCF v2.2 "CMP API", US Privacy, GPP mobile specs).
package enum CMPKey {
    /// `1` when GDPR applies, `0` when it does not; unset until the CMP has decided.
    package static let gdprApplies = "IABTCF_gdprApplies"
    /// The full TC string.
    package static let tcString = "IABTCF_TCString"
    /// Purpose consents as a binary string, purpose 1 first (`"1011…"`).
    package static let purposeConsents = "IABTCF_PurposeConsents"
    /// Purpose legitimate interests as a binary string, purpose 1 first.
    package static let purposeLegitimateInterests = "IABTCF_PurposeLegitimateInterests"
    /// The publisher's (the app's own) purpose consents as a binary string.
    package static let publisherConsent = "IABTCF_PublisherConsent"
    /// The publisher's purpose legitimate interests as a binary string.
    package static let publisherLegitimateInterests = "IABTCF_PublisherLegitimateInterests"
    /// Vendor consents as a binary string, vendor 1 first.
    package static let vendorConsents = "IABTCF_VendorConsents"
    /// Vendor legitimate interests as a binary string, vendor 1 first.
    package static let vendorLegitimateInterests = "IABTCF_VendorLegitimateInterests"
    /// The US Privacy string, e.g. `1YNN`.
    package static let usPrivacyString = "IABUSPrivacy_String"
    /// The full GPP string.
    package static let gppString = "IABGPP_HDR_GppString"
    /// The GPP sections that apply, joined by underscores (e.g. `"2_7"`).
    package static let gppSectionIDs = "IABGPP_GppSID"

    /// Every key FeatureGate reads, in the order above.
    package static let all = [
        gdprApplies, tcString, purposeConsents, purposeLegitimateInterests, publisherConsent,
        publisherLegitimateInterests, vendorConsents, vendorLegitimateInterests, usPrivacyString, gppString,
        gppSectionIDs,
    ]

    /// Reads every key FeatureGate uses from `source` into a dictionary (absent keys are left out).
    package static func snapshot(of source: some CMPKeyValueSource) -> [String: CMPValue] {
        var values: [String: CMPValue] = [:]
        for key in all {
            if let value = source.cmpValue(forKey: key) { values[key] = value }
        }
        return values
    }
}
