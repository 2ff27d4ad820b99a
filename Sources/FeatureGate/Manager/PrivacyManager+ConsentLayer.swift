// MARK: - The consent layer (used by ConsentManager)

extension PrivacyManager {
    /// The consent categories the gate state keeps as refused.
    var storedConsentRefusals: Set<ConsentCategory> {
        state.withLock { $0.rules.deniedCategories }
    }

    /// Attaches a consent layer judged by the consent manager, or replaces its decisions. Writes nothing.
    func setConsentDecisions(policy: ConsentPolicy, decisions: [ConsentCategory: ConsentDecision]) {
        update { $0.rules.consent = GateRules.ConsentLayer(policy: policy, decisions: decisions) }
    }

    /// Applies one consent edge: decides `category`'s features (on for a grant, off for a refusal, undecided for
    /// unknown), keeps the refusal in the gate state, and updates the permitted set from `decisions`. One save, one
    /// notification.
    ///
    /// With `isSavedElsewhere` (an edge another process recorded, read from the ledger), nothing is saved: that
    /// process saved its own change, and saving it again from here, late, could undo a newer one it made since.
    /// With `isCommittedByLedger`, the edge's record was just appended to the file ledger under the same hold of the
    /// lock: see ``update(isSavedElsewhere:isCommittedByLedger:_:)``.
    func applyConsentEdge(
        _ category: ConsentCategory,
        edge: ConsentStatus,
        policy: ConsentPolicy,
        decisions: [ConsentCategory: ConsentDecision],
        isSavedElsewhere: Bool = false, isCommittedByLedger: Bool = false
    ) {
        update(isSavedElsewhere: isSavedElsewhere, isCommittedByLedger: isCommittedByLedger) {
            $0.rules.applyConsentEdge(category, edge: edge, policy: policy, decisions: decisions)
        }
    }
}

extension PrivacyManager {
    /// Each category's status as the consent layer last judged it (every category of the policy and any other with
    /// an answer); empty before a consent manager attached. Read under the gate's lock, without waiting for the
    /// consent manager: an event buffer takes the consent in force when an event is tracked from here.
    package var consentStatuses: [ConsentCategory: ConsentStatus] {
        state.withLock { $0.rules.consent?.decisions.mapValues(\.status) ?? [:] }
    }
}
