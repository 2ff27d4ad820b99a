extension TCString {
    /// Something in a valid TC string that a reader should know, though it does not stop decoding.
    public enum Warning: Sendable, Hashable, CustomStringConvertible {
        /// The string was written under a TCF policy before v2.2 (policy version 4).
        case olderPolicyVersion(Int)
        /// `IsServiceSpecific` is 0 (consent shared across services) in a string written before TCF v2.2; under
        /// policy version 4 and later the string does not decode.
        case notServiceSpecific
        /// Legitimate interest is signalled for purposes TCF v2.2 allows only with consent (1, 3, 4, 5, 6);
        /// those signals are decoded (the fields list them) but never count for consent.
        case legitimateInterestNotAllowed(purposes: [Int])
        /// Publisher restrictions of type 3, which the specification leaves undefined, restrict these purposes
        /// (ascending); their vendors are treated as not allowed to process them.
        case undefinedRestrictionType(purposes: [Int])
        /// The allowed-vendors segment, which TCF v2.2 no longer uses, is present.
        case allowedVendorsSegmentIsDeprecated

        /// The segment the warning is about (legitimate interest: the core segment, even when the publisher-TC
        /// segment signals it too).
        public var segment: TCString.DecodingError.Segment {
            switch self {
            case .olderPolicyVersion, .notServiceSpecific, .legitimateInterestNotAllowed, .undefinedRestrictionType:
                .core
            case .allowedVendorsSegmentIsDeprecated: .allowedVendors
            }
        }

        /// One line saying what was noticed.
        public var description: String {
            switch self {
            case .olderPolicyVersion(let version):
                "TcfPolicyVersion \(version): written before TCF v2.2 (policy version 4)"
            case .notServiceSpecific:
                "IsServiceSpecific 0: consent shared across services, which TCF v2.2 (policy version 4) no longer allows"
            case .legitimateInterestNotAllowed(let purposes):
                "legitimate interest signalled for \(Self.purposeList(purposes)), which TCF v2.2 allows only with "
                    + "consent; decoded, but never counted for consent"
            case .undefinedRestrictionType(let purposes):
                "publisher restriction of type 3 (undefined) for \(Self.purposeList(purposes)); its vendors are "
                    + "treated as not allowed for \(purposes.count == 1 ? "it" : "them")"
            case .allowedVendorsSegmentIsDeprecated:
                "the allowed-vendors segment is not used under TCF v2.2"
            }
        }

        /// `purpose 3` or `purposes 2, 10`.
        static func purposeList(_ purposes: [Int]) -> String {
            "purpose\(purposes.count == 1 ? "" : "s") \(purposes.map(String.init).joined(separator: ", "))"
        }
    }

    /// The purposes TCF v2.2 never allows to rest on legitimate interest: 1 (store and access information) and
    /// 3–6 (personalised advertising and content profiles and their selection).
    public static let consentOnlyPurposes: Set<Int> = [1, 3, 4, 5, 6]

    /// What a reader should know about this string, in a stable order; empty for a plain TCF v2.2 string.
    public var warnings: [Warning] {
        var warnings: [Warning] = []
        if tcfPolicyVersion < 4 { warnings.append(.olderPolicyVersion(tcfPolicyVersion)) }
        if !isServiceSpecific { warnings.append(.notServiceSpecific) }
        let publisherLI = publisherTC?.purposeLegitimateInterests ?? []
        let forbidden = Self.consentOnlyPurposes.filter {
            purposeLegitimateInterests.contains($0) || publisherLI.contains($0)
        }
        if !forbidden.isEmpty { warnings.append(.legitimateInterestNotAllowed(purposes: forbidden.sorted())) }
        let undefined = Set(publisherRestrictions.lazy.filter { $0.type == .undefined }.map(\.purpose))
        if !undefined.isEmpty { warnings.append(.undefinedRestrictionType(purposes: undefined.sorted())) }
        if allowedVendors != nil { warnings.append(.allowedVendorsSegmentIsDeprecated) }
        return warnings
    }
}
