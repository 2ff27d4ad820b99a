import FeatureGate

/// One line per explanation: the features that are off, grouped by the layers that hold them off.
///
/// For example `contacts: consent (thirdPartySharing unknown), local (configuration)`.
func heldOffLines(_ privacy: PrivacyManager) -> [String] {
    var groups: [(why: String, names: [String])] = []
    for reason in privacy.reasons() where !reason.isEnabled {
        let why = reason.blockingLayers.map { layer in
            switch layer {
            case .local:
                "local (\(reason.decidingCategory.map { "\($0) consent" } ?? reason.source.rawValue))"
            case .consent:
                "consent ("
                    + reason.withholdingConsent.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                    .joined(separator: ", ") + ")"
            case .remote: "remote kill switch"
            }
        }.joined(separator: ", ")
        let name = privacy.catalog.names(of: reason.feature).joined()
        if let index = groups.firstIndex(where: { $0.why == why }) {
            groups[index].names.append(name)
        } else {
            groups.append((why, [name]))
        }
    }
    return groups.map { "\($0.names.joined(separator: ", ")): \($0.why)" }
}
