import Foundation

/// The gate's decision rules as a pure value: what each layer holds and how each decision changes it.
///
/// ``PrivacyManager`` keeps one under its lock and adds what a value cannot do: the atomic every check reads,
/// persistence, and delivery to observers. Nothing here locks, reads a file or a clock, or calls back, so a reference
/// model (or a model of several processes) can step it directly. The effective set is
/// `local ∩ permitted − remote`, limited to the catalog.
package struct GateRules: Sendable {
    /// How a ``ConsentManager`` judged each category, with its policy.
    package struct ConsentLayer: Sendable {
        package var policy: ConsentPolicy
        package var decisions: [ConsentCategory: ConsentDecision]

        package init(policy: ConsentPolicy, decisions: [ConsentCategory: ConsentDecision]) {
            self.policy = policy
            self.decisions = decisions
        }

        /// The categories that withhold `flag`, with their decisions.
        func withholding(_ flag: Feature) -> [ConsentDecision] {
            policy.features.compactMap { category, mapped in
                guard !mapped.isDisjoint(with: flag) else { return nil }
                // A category without a decision has no answer, so its judgement does not depend on the clock.
                let decision =
                    decisions[category]
                    ?? policy.decision(for: category, answer: nil, context: ConsentContext(), now: .distantPast)
                return decision.isPermitted ? nil : decision
            }
        }
    }

    /// The flags the gate knows; every decision is masked to it.
    package let catalog: FeatureCatalog
    /// The configuration's flags: the value of every undecided flag.
    package var configured: Feature
    /// The decided flags, and the decided value of each (`values ⊆ decided`).
    package private(set) var decided: Feature
    package private(set) var values: Feature
    /// The consent categories refused through the consent layer; persisted.
    package private(set) var deniedCategories: Set<ConsentCategory>
    /// The flags revoke-all decided off that nobody has turned on since (`⊆ decided − values`); persisted, and kept
    /// by a reset: revoke-all is the user's refusal.
    package private(set) var revoked: Feature
    /// Who an undecided flag's value comes from: the configuration, after a reset, or instead of an unreadable record.
    package var undecidedSource: FeatureSource
    /// The stored record could not be read: every undecided flag is off, and nothing is saved until it can be read
    /// and the changes below are merged into it.
    package private(set) var isHoldingWrites: Bool
    /// What changed while writes were held: these flags and refusals win over the stored record's.
    private var changedWhileHeld: Feature = []
    private var refusedWhileHeld: Set<ConsentCategory> = []
    private var unrefusedWhileHeld: Set<ConsentCategory> = []
    /// Flags decided in this run, and by whom; decided flags in neither were read from the store.
    private var decidedByApp: Feature = []
    private var decidedByConsent: [UInt: ConsentCategory] = [:]
    /// The consent layer, once a policy is known; `nil` permits everything.
    package var consent: ConsentLayer? {
        // The consent manager judged again: what stored refusals overrode is its own judgement now.
        didSet { if !isAdopting { judgedBeforeStoredRefusal = [:] } }
    }
    /// What the consent manager had judged for each category that a refusal another process stored overrode
    /// (``adopt(_:)``): restored when that refusal is lifted before the manager judges again, so a refusal seen
    /// between two of another process's changes does not keep the category withheld after both.
    private var judgedBeforeStoredRefusal: [ConsentCategory: ConsentDecision?] = [:]
    private var isAdopting = false
    /// The server's kill switch, and per disabled flag the rule or name that disabled it.
    package private(set) var remote: Feature = []
    package private(set) var remoteRules: [UInt: String] = [:]

    /// The rules at start-up: `stored`'s decisions and refusals over the configuration.
    ///
    /// With a `consentPolicy`, every category reads as unanswered until a consent manager attaches, except the stored
    /// refusals, which read as denied.
    package init(
        catalog: FeatureCatalog,
        configured: Feature,
        stored: FeatureStateRecord,
        undecidedSource: FeatureSource,
        isHoldingWrites: Bool,
        consentPolicy: ConsentPolicy?
    ) {
        self.catalog = catalog
        self.configured = catalog.mask(configured)
        self.decided = catalog.mask(stored.decidedFeatures)
        self.values = catalog.mask(stored.enabledFeatures).intersection(decided)
        self.deniedCategories = stored.deniedConsentCategories
        self.revoked = catalog.mask(stored.revokedFeatures).intersection(decided).subtracting(values)
        self.undecidedSource = undecidedSource
        self.isHoldingWrites = isHoldingWrites
        self.consent = consentPolicy.map { policy in
            ConsentLayer(policy: policy, decisions: Self.decisions(refusing: stored.deniedConsentCategories, policy))
        }
    }

    // MARK: - The layers

    /// While writes are held, an undecided flag is off: the unread record may have decided it off.
    package var local: Feature { isHoldingWrites ? values : values.union(configured.subtracting(decided)) }

    /// What consent permits; everything until a consent layer is attached.
    package var permitted: Feature {
        guard let consent else { return FeatureStateRecord.everyFlag }
        return consent.policy.permitted(FeatureStateRecord.everyFlag, decisions: consent.decisions)
    }

    /// `local ∩ permitted`: the effective set before the kill switch.
    package var unswitched: Feature { local.intersection(permitted) }

    /// `local ∩ permitted − remote`: what every check reads.
    package var effective: Feature { unswitched.subtracting(remote) }

    /// What the store keeps.
    package var record: FeatureStateRecord {
        var record = FeatureStateRecord(
            enabledFeatures: values, decidedFeatures: decided, deniedConsentCategories: deniedCategories)
        record.revokedFeatures = revoked
        return record
    }

    // MARK: - Decisions

    /// An app decision: decides the flags whose local value it changes (`disable` wins over `enable`). A call that
    /// changes no local value decides nothing, so it writes nothing.
    package mutating func decide(enable: Feature, disable: Feature) {
        let enable = catalog.mask(enable)
        let disable = catalog.mask(disable)
        let wanted = local.union(enable).subtracting(disable)
        var changed = wanted.symmetricDifference(local)
        // While the record is unread, a flag that shows off may be on in it: turning it off is a decision.
        if isHoldingWrites { changed.formUnion(disable) }
        decided.formUnion(changed)
        values = values.subtracting(changed).union(wanted.intersection(changed))
        decidedByApp.formUnion(changed)
        revoked.subtract(values)
        if isHoldingWrites { changedWhileHeld.formUnion(changed) }
        forgetConsentDeciders(of: changed)
    }

    /// Sets the effective set to `wanted` (masked to the catalog) by deciding the flags whose effective value it
    /// changes: a hidden flag keeps its local value unless `wanted` turns it on.
    package mutating func setEffective(_ wanted: Feature) {
        let wanted = catalog.mask(wanted)
        let current = effective
        decide(enable: wanted.subtracting(current), disable: current.subtracting(wanted))
    }

    /// Applies one consent edge of `category`: decides its features on for a grant, off for a refusal, undecided for
    /// unknown; keeps the refusal; and takes `decisions` as the consent layer's judgement.
    package mutating func applyConsentEdge(
        _ category: ConsentCategory,
        edge: ConsentStatus,
        policy: ConsentPolicy,
        decisions: [ConsentCategory: ConsentDecision]
    ) {
        let features = catalog.mask(policy.features[category] ?? [])
        switch edge {
        case .granted: decide(features, on: true, by: category)
        case .denied, .restricted: decide(features, on: false, by: category)
        case .unknown, .expired: undecide(features)
        }
        setRefused(edge.isRefusal, category)
        consent = ConsentLayer(policy: policy, decisions: decisions)
    }

    /// Revoke-all: decides every flag of the catalog off, undecided ones included, as the user's refusal (kept by a
    /// reset), and refuses `categories`.
    package mutating func revoke(refusing categories: Set<ConsentCategory>) {
        decide(enable: [], disable: catalog.allFeatures)  // While writes are held, this marks every flag changed.
        decided.formUnion(catalog.allFeatures)
        revoked = catalog.allFeatures
        for category in categories { setRefused(true, category) }
    }

    /// Replaces the kill switch with `features` (masked to the catalog), each disabled by the rule named in `rules`.
    package mutating func setRemote(_ features: Feature, rules: [UInt: String]) {
        remote = catalog.mask(features)
        remoteRules = rules
    }

    /// A consent edge: decides every flag of `features` to `isOn`, changed or not, so the person's answer outlives a
    /// later change of the configuration.
    private mutating func decide(_ features: Feature, on isOn: Bool, by category: ConsentCategory) {
        decided.formUnion(features)
        values = isOn ? values.union(features) : values.subtracting(features)
        decidedByApp.subtract(features)
        revoked.subtract(values)
        if isHoldingWrites { changedWhileHeld.formUnion(features) }
        for flag in features.flags { decidedByConsent[flag.rawValue] = category }
    }

    /// Undecides `features`, except what revoke-all decided off: an answer withdrawn is not permission.
    private mutating func undecide(_ features: Feature) {
        let features = features.subtracting(revoked)
        decided.subtract(features)
        values.subtract(features)
        if isHoldingWrites { changedWhileHeld.formUnion(features) }
        decidedByApp.subtract(features)
        forgetConsentDeciders(of: features)
    }

    /// Keeps or drops `category`'s refusal in the record.
    private mutating func setRefused(_ isRefused: Bool, _ category: ConsentCategory) {
        if isRefused {
            deniedCategories.insert(category)
        } else {
            deniedCategories.remove(category)
        }
        guard isHoldingWrites else { return }
        if isRefused {
            refusedWhileHeld.insert(category)
            unrefusedWhileHeld.remove(category)
        } else {
            unrefusedWhileHeld.insert(category)
            refusedWhileHeld.remove(category)
        }
    }

    /// Takes `stored` (just read) for every flag and refusal not changed while writes were held, and stops holding
    /// them.
    package mutating func merge(undecidedSource: FeatureSource, stored: FeatureStateRecord) {
        let changed = changedWhileHeld
        decided = catalog.mask(stored.decidedFeatures).subtracting(changed).union(decided.intersection(changed))
        values = catalog.mask(stored.enabledFeatures).subtracting(changed).union(values.intersection(changed))
            .intersection(decided)
        revoked = catalog.mask(stored.revokedFeatures).subtracting(changed).union(revoked.intersection(changed))
            .intersection(decided).subtracting(values)
        deniedCategories = stored.deniedConsentCategories.union(refusedWhileHeld).subtracting(unrefusedWhileHeld)
        isHoldingWrites = false
        self.undecidedSource = undecidedSource
        changedWhileHeld = []
        refusedWhileHeld = []
        unrefusedWhileHeld = []
    }

    /// Takes `stored` (a record another process saved, with this process's unsaved change already merged into it) as
    /// the decided flags and refusals. A flag whose decision it changes is no longer this run's: ``reason(for:)``
    /// names the stored state. A category it newly refuses reads as denied in the consent layer at once; one it no
    /// longer refuses reads as the consent manager last judged it (as before a stored refusal overrode that), until
    /// the consent manager judges again.
    package mutating func adopt(_ stored: FeatureStateRecord) {
        let newDecided = catalog.mask(stored.decidedFeatures)
        let newValues = catalog.mask(stored.enabledFeatures).intersection(newDecided)
        let changed = newDecided.symmetricDifference(decided).union(newValues.symmetricDifference(values))
        decided = newDecided
        values = newValues
        revoked = catalog.mask(stored.revokedFeatures).intersection(newDecided).subtracting(newValues)
        decidedByApp.subtract(changed)
        forgetConsentDeciders(of: changed)
        let newlyRefused = stored.deniedConsentCategories.subtracting(deniedCategories)
        let lifted = deniedCategories.subtracting(stored.deniedConsentCategories)
        deniedCategories = stored.deniedConsentCategories
        guard consent != nil else { return }
        isAdopting = true
        defer { isAdopting = false }
        for category in lifted {
            guard let judged = judgedBeforeStoredRefusal.removeValue(forKey: category) else { continue }
            consent?.decisions[category] = judged
        }
        guard let policy = consent?.policy, !newlyRefused.isEmpty else { return }
        for (category, decision) in Self.decisions(refusing: newlyRefused, policy)
        where newlyRefused.contains(category) {
            if judgedBeforeStoredRefusal[category] == nil {
                judgedBeforeStoredRefusal[category] = .some(consent?.decisions[category])
            }
            consent?.decisions[category] = decision
        }
    }

    /// How `policy` judges every category before a consent manager has read the ledger: the refused `categories`
    /// denied (with no time, so their refusals do not expire), every other unanswered.
    private static func decisions(
        refusing categories: Set<ConsentCategory>, _ policy: ConsentPolicy
    ) -> [ConsentCategory: ConsentDecision] {
        let refused = categories.map { category in
            (category, ConsentAnswer(status: .denied, decidedAt: nil, source: nil, policyVersion: 0))
        }
        return policy.decisions(
            answers: Dictionary(uniqueKeysWithValues: refused), context: ConsentContext(), now: .distantPast)
    }

    /// Starts holding writes again: a record that could be read can no longer be (the device locked, say). Every
    /// undecided flag is off until it can be read and this process's changes since are merged into it.
    package mutating func holdWrites() {
        isHoldingWrites = true
    }

    /// Starts holding writes because the save of this process's change since `saved` could not take the store's
    /// lock: that change counts as made while held, so the merge keeps it over the record it then reads.
    package mutating func holdWrites(unsavedSince saved: FeatureStateRecord) {
        let current = record
        changedWhileHeld.formUnion(
            catalog.mask(
                current.decidedFeatures.symmetricDifference(saved.decidedFeatures)
                    .union(current.enabledFeatures.symmetricDifference(saved.enabledFeatures))
                    .union(current.revokedFeatures.symmetricDifference(saved.revokedFeatures))))
        let refused = current.deniedConsentCategories.subtracting(saved.deniedConsentCategories)
        let unrefused = saved.deniedConsentCategories.subtracting(current.deniedConsentCategories)
        refusedWhileHeld = refusedWhileHeld.subtracting(unrefused).union(refused)
        unrefusedWhileHeld = unrefusedWhileHeld.subtracting(refused).union(unrefused)
        isHoldingWrites = true
    }

    /// Drops the consent deciders of `features`; allocates nothing when consent never decided a flag.
    private mutating func forgetConsentDeciders(of features: Feature) {
        guard !decidedByConsent.isEmpty else { return }
        for flag in features.flags { decidedByConsent[flag.rawValue] = nil }
    }

    // MARK: - Explaining

    /// Why `flag` is on or off: its local value and who decided it, what consent withholds, and the kill switch.
    package func reason(for flag: Feature) -> FeatureReason {
        let source: FeatureSource
        var decidingCategory: ConsentCategory?
        if !decided.contains(flag) {
            source = undecidedSource
        } else if revoked.contains(flag) {
            source = .revocation
        } else if decidedByApp.contains(flag) {
            source = .app
        } else if let category = decidedByConsent[flag.rawValue] {
            source = .consent
            decidingCategory = category
        } else {
            source = .storedState
        }
        let withholding = consent?.withholding(flag) ?? []
        return FeatureReason(
            feature: flag,
            isLocallyEnabled: local.contains(flag),
            isRemotelyDisabled: remote.contains(flag),
            remoteRule: remote.contains(flag) ? remoteRules[flag.rawValue] : nil,
            source: source,
            decidingCategory: decidingCategory,
            withholdingConsent: Dictionary(uniqueKeysWithValues: withholding.map { ($0.category, $0.status) }),
            consentBlockers: Dictionary(
                uniqueKeysWithValues: withholding.compactMap { decision in
                    decision.blocker.flatMap { $0 == .region ? nil : (decision.category, $0) }
                })
        )
    }
}
