extension TCString {
    /// Something in a valid TC string that a reader should know, though it does not stop decoding.
    public enum Warning: Sendable, Hashable, CustomStringConvertible {
        /// The string was written under a TCF policy before v2.2 (policy version 4).
        case olderPolicyVersion(Int)
        /// Legitimate interest is signalled for purposes TCF v2.2 allows only with consent (1, 3, 4, 5, 6);
        /// those signals are ignored.
        case legitimateInterestNotAllowed(purposes: [Int])
        /// The allowed-vendors segment, which TCF v2.2 no longer uses, is present.
        case allowedVendorsSegmentIsDeprecated

        /// The segment the warning is about (legitimate interest: the core segment, even when the publisher-TC
        /// segment signals it too).
        public var segment: TCStringError.Segment {
            switch self {
            case .olderPolicyVersion, .legitimateInterestNotAllowed: .core
            case .allowedVendorsSegmentIsDeprecated: .allowedVendors
            }
        }

        /// One line saying what was noticed.
        public var description: String {
            switch self {
            case .olderPolicyVersion(let version):
                "TcfPolicyVersion \(version): written before TCF v2.2 (policy version 4)"
            case .legitimateInterestNotAllowed(let purposes):
                "legitimate interest signalled for purpose\(purposes.count == 1 ? "" : "s") "
                    + "\(purposes.map(String.init).joined(separator: ", ")), which TCF v2.2 allows only with consent; "
                    + "ignored"
            case .allowedVendorsSegmentIsDeprecated:
                "the allowed-vendors segment is not used under TCF v2.2"
            }
        }
    }

    /// The purposes TCF v2.2 never allows to rest on legitimate interest: 1 (store and access information) and
    /// 3–6 (personalised advertising and content profiles and their selection).
    public static let consentOnlyPurposes: Set<Int> = [1, 3, 4, 5, 6]

    /// What a reader should know about this string, in a stable order; empty for a plain TCF v2.2 string.
    public var warnings: [Warning] {
        var warnings: [Warning] = []
        if tcfPolicyVersion < 4 { warnings.append(.olderPolicyVersion(tcfPolicyVersion)) }
        let publisherLI = publisherTC?.purposeLegitimateInterests ?? []
        let forbidden = Self.consentOnlyPurposes.filter {
            purposeLegitimateInterests.contains($0) || publisherLI.contains($0)
        }
        if !forbidden.isEmpty { warnings.append(.legitimateInterestNotAllowed(purposes: forbidden.sorted())) }
        if allowedVendors != nil { warnings.append(.allowedVendorsSegmentIsDeprecated) }
        return warnings
    }
}
