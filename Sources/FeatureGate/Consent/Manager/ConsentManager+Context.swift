import Foundation

extension ConsentManager {
    /// Notices every answer that expired since the last call: records an `expired` entry for each and updates the
    /// gate. Call it when the app comes to the foreground, or at ``nextExpiry``; every other call does it too.
    ///
    /// - Returns: The records appended.
    @discardableResult
    public func refresh() -> [ConsentRecord] {
        noticeExpiries()
    }

    /// Says where the user is now. A region whose rule is stricter (or as strict) takes effect at once; one that
    /// would loosen the rules (opt-in to opt-out) takes effect at the next launch, when the app passes it to `init`
    /// (until then it is ``pendingRegion``). A region never turns a refusal into permission.
    public func setRegion(_ region: ConsentRegion?) {
        noticeExpiries()
        let loosens =
            policy.unanswered.rule(for: context.region) == .optIn && policy.unanswered.rule(for: region) == .optOut
        if loosens {
            pendingRegion = region
        } else {
            pendingRegion = nil
            context.region = region
            updateGate()
        }
    }

    /// Marks the user as a child, or unmarks them; takes effect at once. While marked, the policy's
    /// ``ConsentPolicy/childProhibited`` categories are not permitted whatever any grant says. Only the app sets
    /// it: no consent source can.
    public func setChild(_ isChild: Bool) {
        noticeExpiries()
        guard context.isChild != isChild else { return }
        context.isChild = isChild
        updateGate()
    }

    /// Applies a Global Privacy Control signal (from the app's web views, its server, or GPP's US National `Gpc`
    /// field), an outside source of its own (``ConsentSource/gpc``).
    ///
    /// Like every outside answer it decides only when it changes, even across launches (the ledger keeps it): when
    /// it turns on, each ``ConsentPolicy/saleOrSharing`` category is refused, and a grant the user makes later
    /// stands while the signal stays on. Turning off lifts nothing; it is recorded (a `gpc` record of `unknown`,
    /// which changes no status) so that turning on again counts.
    ///
    /// - Returns: The records appended.
    /// - Throws: The first ``ConsentRecordingError``; refusals are applied regardless.
    @discardableResult
    public func applyGlobalPrivacyControl(_ isOn: Bool) throws(ConsentRecordingError) -> [ConsentRecord] {
        noticeExpiries()
        let outcome = Result { () throws(ConsentRecordingError) -> [ConsentRecord] in
            try recordEach(policy.saleOrSharing.sortedByName()) { (category) throws(ConsentRecordingError) in
                if isOn { return try applyAnswer(.denied, for: category, source: .gpc) }
                let key = SourceAnswer(source: .gpc, category: category)
                guard lastAnswers[key, default: .unknown] != .unknown else { return nil }
                lastAnswers[key] = .unknown
                let record = ConsentRecord(
                    category: category, previousStatus: .unknown, newStatus: .unknown, time: now(),
                    policyVersion: policy.version, source: .gpc)
                try recordRemembered(record)
                return record
            }
        }
        if context.isGlobalPrivacyControlOn != isOn {
            context.isGlobalPrivacyControlOn = isOn
            updateGate()
        }
        return try outcome.get()
    }
}
