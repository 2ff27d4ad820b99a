import FeatureGate

/// What a CMP's keys say about each consent category, and the Google Consent Mode values that follow.
///
/// Computed by ``init(keys:mapping:subject:)``, a pure function of the keys: it reads nothing else, stores
/// nothing, and never throws. Malformed signals fail closed: they add an error to ``diagnostics`` and leave the
/// categories they cover `unknown` at best (never granted).
///
/// The rules:
/// - TCF: `IABTCF_gdprApplies` = 0 says nothing; unset, or 1 with no answer yet, reads `unknown`; 1 with the
///   purposes answered grants a category whose purposes (``TCFPurposeMapping``) all count, and denies the others.
///   The TC string and the pre-parsed keys are both read; where they disagree, the more restrictive wins.
/// - US Privacy: an opt-out of sale denies `thirdPartySharing`.
/// - GPP US sections (US National, 7, and every state section, 8 to 27, each when `IABGPP_GppSID` lists it, or
///   when that key is absent): an opt-out of sale (`SaleOptOut` = 1) denies `thirdPartySharing`; of sharing, both
///   `thirdPartySharing` and `advertising`; of targeted advertising, `advertising`; so does a GPC subsection's
///   `Gpc` = 1 for both. A section without a field contributes nothing for it. US signals only take away: not
///   opting out grants nothing.
/// - Signals combine with the most restrictive winning: denied over unknown over granted.
public struct CMPConsent: Sendable, Hashable {
    /// The status of each category some signal decided. Categories no signal speaks to are absent.
    public var decisions: [ConsentCategory: ConsentStatus]
    /// The Google Consent Mode v2 values.
    public var consentMode: ConsentModeSnapshot
    /// Malformed signals (errors) and notes (warnings), in the order of ``CMPKey/all``.
    public var diagnostics: [CMPDiagnostic]
    /// The GPC subsection's `Gpc` of the applicable GPP US sections that carry one (`true` when any says on);
    /// `nil` when none does. ``CMPConsentSource`` hands it to `ConsentManager.applyGlobalPrivacyControl(_:)`.
    public var globalPrivacyControl: Bool?

    /// Whether any signal was malformed.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// The status of `category`: `unknown` when no signal decided it.
    public func status(for category: ConsentCategory) -> ConsentStatus {
        decisions[category] ?? .unknown
    }

    /// Reads `keys` (as ``CMPKey/snapshot(of:)`` returns them) for `subject` with `mapping`.
    public init(
        keys: [String: CMPValue], mapping: TCFPurposeMapping = .default, subject: TCFSubject = .publisher
    ) {
        var reader = SignalReader(keys: keys)
        let tcf = reader.readTCF(mapping: mapping, subject: subject)
        let us = reader.readUSSignals()
        var decisions: [ConsentCategory: ConsentStatus] = [:]
        for (category, status) in tcf.decisions { decisions[category] = status }
        for (category, status) in us {
            decisions[category] = Self.moreRestrictive(decisions[category], status)
        }
        self.decisions = decisions
        self.diagnostics = reader.diagnostics
        self.globalPrivacyControl = reader.globalPrivacyControl
        self.consentMode = ConsentModeSnapshot(
            decisions: decisions, tcfPurposes: tcf.consentedPurposes, otherSignals: us)
    }

    /// The more restrictive of two readings: denied over unknown over granted; `nil` means "says nothing".
    static func moreRestrictive(_ lhs: ConsentStatus?, _ rhs: ConsentStatus?) -> ConsentStatus? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        func rank(_ status: ConsentStatus) -> Int {
            switch status {
            case .granted: 0
            case .unknown, .expired: 1
            case .denied, .restricted: 2
            }
        }
        return rank(lhs) >= rank(rhs) ? lhs : rhs
    }
}

/// What one reading of TCF (the keys, or the TC string) says the subject may do.
private struct TCFReading {
    /// Purposes that count by consent.
    var consent: Set<Int>
    /// Purposes that count by legitimate interest (consent-only purposes already removed).
    var legitimateInterest: Set<Int>
    /// Vendor consents (for the sharing vendors).
    var vendorConsents: TCString.IDSet

    func counts(_ purpose: Int) -> Bool { consent.contains(purpose) || legitimateInterest.contains(purpose) }

    /// The more restrictive of two readings: what both allow.
    func intersection(_ other: TCFReading) -> TCFReading {
        TCFReading(
            consent: consent.intersection(other.consent),
            legitimateInterest: legitimateInterest.intersection(other.legitimateInterest),
            vendorConsents: vendorConsents.intersection(other.vendorConsents))
    }
}

private struct SignalReader {
    let keys: [String: CMPValue]
    var diagnostics: [CMPDiagnostic] = []
    var globalPrivacyControl: Bool?

    init(keys: [String: CMPValue]) {
        self.keys = keys
    }

    mutating func error(_ key: String, _ message: String) {
        diagnostics.append(CMPDiagnostic(severity: .error, key: key, message: message))
    }

    mutating func warning(_ key: String, _ message: String) {
        diagnostics.append(CMPDiagnostic(severity: .warning, key: key, message: message))
    }

    /// A string key; a number there is an error.
    mutating func string(_ key: String) -> String?? {
        switch keys[key] {
        case nil: return .some(nil)
        case .string(let string): return .some(string)
        case .number(let number):
            error(key, "found the number \(number), expected a string; ignored, failing closed")
            return nil
        }
    }

    /// A binary-string key (`"0110…"`) as the set of 1-based positions set; `.some(nil)` when absent, `nil` when
    /// malformed.
    mutating func bits(_ key: String) -> TCString.IDSet?? {
        guard let text = string(key) else { return nil }
        guard let text else { return .some(nil) }
        var set = TCString.IDSet()
        for (index, character) in text.utf8.enumerated() {
            switch character {
            case UInt8(ascii: "1"): set.insert(index + 1)
            case UInt8(ascii: "0"): break
            default:
                error(
                    key,
                    "character \(index + 1) of \(UntrustedText.quoted(text)) is not 0 or 1; ignored, failing closed")
                return nil
            }
        }
        return .some(set)
    }

    // MARK: TCF

    mutating func readTCF(
        mapping: TCFPurposeMapping, subject: TCFSubject
    ) -> (decisions: [ConsentCategory: ConsentStatus], consentedPurposes: Set<Int>?) {
        let categories = mapping.decidedCategories
        func all(_ status: ConsentStatus) -> [ConsentCategory: ConsentStatus] {
            Dictionary(uniqueKeysWithValues: categories.map { ($0, status) })
        }
        switch keys[CMPKey.gdprApplies] {
        case .number(0):
            return ([:], nil)
        case .number(1):
            break
        case nil:
            return (all(.unknown), nil)
        case let other?:
            error(CMPKey.gdprApplies, "found \(other), expected 0 or 1; TCF categories read as unknown")
            // Still read the rest, for their diagnostics; the result stays unknown.
            _ = readings(subject: subject)
            return (all(.unknown), nil)
        }
        let (fromKeys, fromString, readFailed) = readings(subject: subject)
        var failed = readFailed
        var reading: TCFReading
        switch (fromKeys, fromString) {
        case (nil, nil):
            return (all(.unknown), failed ? [] : nil)
        case (let keys?, nil):
            reading = keys
            if subject != .publisher {
                // Publisher restrictions on vendors live in the TC string: without it the keys can deny, not grant.
                warning(
                    CMPKey.tcString,
                    "no TC string: the publisher's restrictions on \(subject) cannot be read; nothing is granted")
                failed = true
            }
        case (nil, let string?): reading = string
        case (let keys?, let string?):
            reading = keys.intersection(string)
            if keys.consent != string.consent || keys.legitimateInterest != string.legitimateInterest {
                warning(
                    CMPKey.tcString,
                    "the TC string and the pre-parsed purpose keys disagree for the \(subject); "
                        + "the more restrictive reading is used")
            }
        }
        var decisions: [ConsentCategory: ConsentStatus] = [:]
        for category in categories {
            let requirements = mapping.requirements[category] ?? []
            var granted = requirements.allSatisfy { requirement in requirement.contains { reading.counts($0) } }
            if mapping.vendorSharingCategories.contains(category) {
                granted = granted && mapping.sharingVendorIDs.allSatisfy(reading.vendorConsents.contains)
            }
            // A signal that could not be read grants nothing.
            decisions[category] = granted ? (failed ? .unknown : .granted) : .denied
        }
        return (decisions, failed ? [] : reading.consent)
    }

    /// The keys' reading and the string's reading, each `nil` when absent or malformed; `failed` when either was
    /// malformed (a malformed reading is left out, so it can only make the result less granted).
    private mutating func readings(subject: TCFSubject) -> (TCFReading?, TCFReading?, failed: Bool) {
        var keysFailed = false
        func value(_ read: TCString.IDSet??) -> TCString.IDSet? {
            guard let read else {
                keysFailed = true
                return nil
            }
            return read
        }
        let purposeConsents = value(bits(CMPKey.purposeConsents))
        let purposeLIs = value(bits(CMPKey.purposeLegitimateInterests))
        let publisherConsents = value(bits(CMPKey.publisherConsent))
        let publisherLIs = value(bits(CMPKey.publisherLegitimateInterests))
        let vendorConsents = value(bits(CMPKey.vendorConsents))
        let vendorLIs = value(bits(CMPKey.vendorLegitimateInterests))

        var fromKeys: TCFReading?
        switch subject {
        case .publisher:
            if let publisherConsents {
                fromKeys = TCFReading(
                    consent: Set(publisherConsents),
                    legitimateInterest: Self.allowedLI(publisherLIs ?? []),
                    vendorConsents: vendorConsents ?? [])
            }
        case .vendor(let id):
            if let purposeConsents {
                let consents = vendorConsents ?? []
                fromKeys = TCFReading(
                    consent: consents.contains(id) ? Set(purposeConsents) : [],
                    legitimateInterest: (vendorLIs ?? []).contains(id) ? Self.allowedLI(purposeLIs ?? []) : [],
                    vendorConsents: consents)
            }
        }
        if keysFailed { fromKeys = nil }

        var stringFailed = false
        var fromString: TCFReading?
        if let text = string(CMPKey.tcString) {
            if let text, !text.isEmpty {
                do {
                    let tc = try TCString(text)
                    fromString = Self.reading(of: tc, subject: subject)
                    warnAboutUndefinedRestrictions(in: tc, subject: subject)
                } catch {
                    self.error(CMPKey.tcString, "\(error); read as granting nothing")
                    stringFailed = true
                }
            }
        } else {
            stringFailed = true
        }
        return (fromKeys, fromString, keysFailed || stringFailed)
    }

    /// Says which purposes a restriction of undefined type (3) takes from the vendor read, so a denial it causes
    /// is explained.
    private mutating func warnAboutUndefinedRestrictions(in tc: TCString, subject: TCFSubject) {
        guard case .vendor(let id) = subject else { return }
        let purposes = Set(
            tc.publisherRestrictions.lazy.filter { $0.type == .undefined && $0.vendors.contains(id) }.map(\.purpose))
        guard !purposes.isEmpty else { return }
        warning(
            CMPKey.tcString,
            "a publisher restriction of type 3 (undefined) covers vendor \(id) for "
                + "\(TCString.Warning.purposeList(purposes.sorted())); read as not allowed")
    }

    private static func allowedLI(_ purposes: TCString.IDSet) -> Set<Int> {
        Set(purposes).subtracting(TCString.consentOnlyPurposes)
    }

    private static func reading(of tc: TCString, subject: TCFSubject) -> TCFReading {
        switch subject {
        case .publisher:
            return TCFReading(
                consent: Set(tc.publisherTC?.purposeConsents ?? []),
                legitimateInterest: allowedLI(tc.publisherTC?.purposeLegitimateInterests ?? []),
                vendorConsents: tc.vendorConsents)
        case .vendor(let id):
            var consent = tc.vendorConsents.contains(id) ? Set(tc.purposeConsents) : []
            var legitimateInterest =
                tc.vendorLegitimateInterests.contains(id) ? allowedLI(tc.purposeLegitimateInterests) : []
            for restriction in tc.publisherRestrictions where restriction.vendors.contains(id) {
                switch restriction.type {
                case .notAllowed, .undefined:
                    consent.remove(restriction.purpose)
                    legitimateInterest.remove(restriction.purpose)
                case .requireConsent:
                    legitimateInterest.remove(restriction.purpose)
                case .requireLegitimateInterest:
                    consent.remove(restriction.purpose)
                }
            }
            return TCFReading(
                consent: consent, legitimateInterest: legitimateInterest, vendorConsents: tc.vendorConsents)
        }
    }

    // MARK: US signals

    mutating func readUSSignals() -> [ConsentCategory: ConsentStatus] {
        var decisions: [ConsentCategory: ConsentStatus] = [:]
        func decide(_ categories: [ConsentCategory], _ status: ConsentStatus) {
            for category in categories { decisions[category] = CMPConsent.moreRestrictive(decisions[category], status) }
        }
        switch string(CMPKey.usPrivacyString) {
        case nil:
            decide([.thirdPartySharing], .unknown)
        case let text??:
            do {
                if try USPrivacyString(text).optedOutOfSale == .yes { decide([.thirdPartySharing], .denied) }
            } catch {
                self.error(CMPKey.usPrivacyString, "\(error); thirdPartySharing reads as unknown")
                decide([.thirdPartySharing], .unknown)
            }
        case .some(nil):
            break
        }
        let applicable = applicableGPPSections()
        switch string(CMPKey.gppString) {
        case nil:
            decide([.thirdPartySharing, .advertising], .unknown)
        case let text??:
            do {
                let gpp = try GPPString(text)
                // Every US section (National and each state) the CMP says applies, by the same field names.
                for id in gpp.usSections.keys.sorted() where applicable?.contains(id) ?? true {
                    let section = gpp.usSections[id]!
                    if let draft = section.draftLayout {
                        warning(
                            CMPKey.gppString,
                            "\(section.name) section is in the \(draft) layout (a 40-bit core, a GPC subsection), not "
                                + "the published one (a 24-bit core, a Sensitive Data Consents subsection); read as "
                                + "that draft, whose opt-outs sit where the published layout has them")
                    }
                    if section.saleOptOut == .optedOut { decide([.thirdPartySharing], .denied) }
                    if section.sharingOptOut == .optedOut { decide([.thirdPartySharing, .advertising], .denied) }
                    if section.targetedAdvertisingOptOut == .optedOut { decide([.advertising], .denied) }
                    if let gpc = section.globalPrivacyControl {
                        if gpc { decide([.thirdPartySharing, .advertising], .denied) }
                        // Any applicable section that saw the signal on wins over one that saw it off.
                        globalPrivacyControl = (globalPrivacyControl ?? false) || gpc
                    }
                }
                if let usPrivacy = gpp.usPrivacy, applicable?.contains(GPPString.usPrivacySectionID) ?? true,
                    usPrivacy.optedOutOfSale == .yes
                {
                    decide([.thirdPartySharing], .denied)
                }
            } catch {
                self.error(CMPKey.gppString, "\(error); thirdPartySharing and advertising read as unknown")
                decide([.thirdPartySharing, .advertising], .unknown)
            }
        case .some(nil):
            break
        }
        return decisions
    }

    /// `IABGPP_GppSID` as a set of section IDs; `nil` (every section applies) when absent or malformed.
    private mutating func applicableGPPSections() -> Set<Int>? {
        switch keys[CMPKey.gppSectionIDs] {
        case nil: return nil
        case .number(let id): return [id]
        case .string(let text):
            let ids = text.split(separator: "_", omittingEmptySubsequences: false).map { Int($0) }
            guard !text.isEmpty, ids.allSatisfy({ $0 != nil }) else {
                error(
                    CMPKey.gppSectionIDs,
                    "found \(UntrustedText.quoted(text)), expected IDs joined by _ (e.g. \"2_7\"); every "
                        + "section of the GPP string is treated as applying")
                return nil
            }
            return Set(ids.compactMap { $0 })
        }
    }
}

extension CMPConsent {
    /// The features this consent enables in a default-off app under `policy`: a grant decides its category's
    /// features on, and each of them runs only while consent permits it (every category that maps it allows
    /// processing, see `ConsentPolicy.permitted(_:statuses:)`). Features no category maps are not included.
    public func enabledFeatures(under policy: ConsentPolicy = .default) -> Feature {
        var decidedOn: Feature = []
        for (category, features) in policy.features where status(for: category) == .granted {
            decidedOn.formUnion(features)
        }
        return policy.permitted(decidedOn, statuses: decisions)
    }
}
