import FeatureGateIAB
import Foundation

/// One fuzz input through the IAB signal decoders, with the invariants that must hold for any bytes.
///
/// A broken invariant is a `precondition` failure, which libFuzzer reports as a crash with the input saved.
enum TCFFuzz {
    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        decodeTCString(text)
        decodeUSSignals(text)
        readAsCMPKeys(text)
    }

    /// The input as each string key a CMP writes, beside publisher keys that grant every purpose.
    private static func readAsCMPKeys(_ text: String) {
        let everything = CMPValue.string(String(repeating: "1", count: 24))
        var keys: [String: CMPValue] = [
            CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: everything,
            CMPKey.publisherLegitimateInterests: everything, CMPKey.tcString: .string(text),
        ]
        let consent = CMPConsent(keys: keys)
        // Whatever the string says, an unreadable one grants nothing.
        if (try? TCString(text)) == nil, !text.isEmpty {
            precondition(consent.decisions.values.allSatisfy { $0 != .granted }, "an unreadable TC string granted")
            precondition(consent.hasErrors, "an unreadable TC string without an error")
        }
        // US signals only take away.
        keys = [CMPKey.gdprApplies: .number(0), CMPKey.usPrivacyString: .string(text), CMPKey.gppString: .string(text)]
        precondition(CMPConsent(keys: keys).decisions.values.allSatisfy { $0 != .granted }, "a US signal granted")
        // Listing one section at a time: still only take-aways, and a GPC value only from a section that has one.
        if let gpp = try? GPPString(text) {
            for id in gpp.usSections.keys {
                keys[CMPKey.gppSectionIDs] = .number(id)
                let consent = CMPConsent(keys: keys)
                precondition(consent.decisions.values.allSatisfy { $0 != .granted }, "a US section granted")
                precondition(
                    consent.globalPrivacyControl == gpp.usSections[id]?.globalPrivacyControl,
                    "GPC from a section that does not apply")
            }
        }
    }

    private static func decodeUSSignals(_ text: String) {
        if let gpp = try? GPPString(text) {
            precondition(zip(gpp.sectionIDs, gpp.sectionIDs.dropFirst()).allSatisfy { $0 < $1 }, "IDs not ascending")
            precondition(Set(gpp.sections.keys) == Set(gpp.sectionIDs), "sections do not match the header")
            precondition((gpp.usNational != nil) == gpp.sectionIDs.contains(7), "usnat decoded without its ID")
            let usIDs = Set(gpp.sectionIDs).intersection(GPPString.USSection.sectionIDs)
            precondition(Set(gpp.usSections.keys) == usIDs, "a US section listed but not decoded, or the reverse")
            for (id, section) in gpp.usSections { checkUSSection(section, id: id) }
        }
        // Every US section decoder on the raw text: a section's text is what a CMP writes after the header.
        for id in GPPString.USSection.sectionIDs {
            do {
                checkUSSection(try GPPString.USSection(sectionID: id, text), id: id)
            } catch {
                precondition(!error.field.isEmpty && error.bitOffset >= 0, "a GPP error without field or offset")
                precondition(
                    error.section.hasPrefix(GPPString.USSection.name(ofSection: id)!), "an error naming another section"
                )
            }
        }
        if let usPrivacy = try? USPrivacyString(text) {
            precondition(usPrivacy.description == text.uppercased(), "US Privacy string did not round-trip")
        }
    }

    /// What holds for any decoded US section: its version leads, two-bit answers are two bits, the opt-outs
    /// FeatureGate acts on are 0, 1 or 2, and a GPC value comes with its subsection type.
    private static func checkUSSection(_ section: GPPString.USSection, id: Int) {
        precondition(section.id == id && section.name == GPPString.USSection.name(ofSection: id), "wrong section")
        precondition(section.fields.first?.value == .int(section.version), "the version does not lead")
        for field in section.fields.dropFirst() {
            switch field.value {
            case .int(let value): precondition((0...3).contains(value), "a two-bit field out of range")
            case .list(let values):
                precondition(values.allSatisfy { (0...3).contains($0) }, "a list value out of range")
            case .bool: precondition(field.name == "Gpc", "a Boolean that is not Gpc")
            }
        }
        for optOut in [section.saleOptOut, section.sharingOptOut, section.targetedAdvertisingOptOut] {
            precondition(optOut.map { (0...2).contains($0.rawValue) } ?? true, "an opt-out of 3 decoded")
        }
        precondition((section.globalPrivacyControl != nil) == (section["SubsectionType"] == .int(1)), "GPC alone")
        precondition((try? GPPString.USSection(sectionID: id, "")) == nil, "an empty section decoded")
    }

    private static func decodeTCString(_ text: String) {
        let decoded: TCString
        do {
            decoded = try TCString(text)
        } catch {
            precondition(!error.field.isEmpty, "an error without a field")
            precondition(error.bitOffset >= 0, "a negative bit offset")
            precondition(!error.description.isEmpty, "an empty description")
            return
        }
        // Decoding is deterministic, and padding never changes what a string says. (A segment of 4n + 1
        // characters has no padded form: padding completes bytes, and such a segment does not end on one.)
        precondition((try? TCString(text)) == decoded, "decoded differently twice")
        let padded = text.split(separator: ".", omittingEmptySubsequences: false).map { part in
            part.hasSuffix("=") || part.count % 4 == 1
                ? String(part) : String(part) + String(repeating: "=", count: (4 - part.count % 4) % 4)
        }.joined(separator: ".")
        precondition((try? TCString(padded)) == decoded, "padding changed the decoded string")
        // Every ID is where the specification puts it.
        precondition(decoded.version == 2, "a version other than 2 decoded")
        precondition(decoded.specialFeatureOptIns.allSatisfy { (1...12).contains($0) }, "special feature out of range")
        precondition(decoded.purposeConsents.allSatisfy { (1...24).contains($0) }, "purpose out of range")
        precondition(decoded.purposeLegitimateInterests.allSatisfy { (1...24).contains($0) }, "purpose out of range")
        for vendors in [decoded.vendorConsents, decoded.vendorLegitimateInterests] {
            precondition(vendors.allSatisfy { (1...65535).contains($0) }, "vendor out of range")
        }
        // Restricted vendors stay ranges: ascending, merged, within 1...65535, and never more of them than range
        // entries the string has room for (17 bits each at least), so memory grows with the string's length.
        var rangeCount = 0
        for restriction in decoded.publisherRestrictions {
            precondition((1...24).contains(restriction.purpose), "restricted purpose out of range")
            let ranges = restriction.vendors.ranges
            precondition(ranges.allSatisfy { (1...65535).contains($0.lowerBound) && $0.upperBound <= 65535 }, "vendor")
            precondition(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound + 1 < $1.lowerBound }, "unmerged")
            rangeCount += ranges.count
        }
        precondition(rangeCount <= text.utf8.count * 6 / 17, "more vendor ranges than the string encodes")
        let undefined = decoded.publisherRestrictions.filter { $0.type == .undefined }.map(\.purpose)
        precondition(
            undefined.isEmpty
                || decoded.warnings.contains(.undefinedRestrictionType(purposes: Array(Set(undefined)).sorted())),
            "a restriction of undefined type without its warning")
        precondition(decoded.isServiceSpecific || decoded.tcfPolicyVersion < 4, "global scope under TCF v2.2 decoded")
        if let publisher = decoded.publisherTC {
            let custom = 0...publisher.numberOfCustomPurposes
            precondition(publisher.customPurposeConsents.allSatisfy(custom.contains), "custom purpose out of range")
        }
        precondition(decoded.consentLanguage.utf8.allSatisfy { (65...90).contains($0) }, "language not A-Z")
    }
}
