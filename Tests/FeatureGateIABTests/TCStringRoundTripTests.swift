import FeatureGateIAB
import Foundation
import PackageTestSupport
import Testing

/// Randomized strings built field by field decode to exactly what was written: every field, both vendor encodings,
/// restrictions and every optional segment. A failure prints its seed.
@Suite struct TCStringRoundTripTests {
    @Test func randomStringsDecodeToWhatWasWritten() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        for iteration in 0..<400 {
            var fields = CoreFields()
            fields.created = Int.random(in: 0..<(1 << 36), using: &random)
            fields.lastUpdated = Int.random(in: 0..<(1 << 36), using: &random)
            fields.cmpID = Int.random(in: 0..<4096, using: &random)
            fields.cmpVersion = Int.random(in: 0..<4096, using: &random)
            fields.consentScreen = Int.random(in: 0..<64, using: &random)
            fields.language = (Int.random(in: 0..<26, using: &random), Int.random(in: 0..<26, using: &random))
            fields.vendorListVersion = Int.random(in: 0..<4096, using: &random)
            fields.policyVersion = Int.random(in: 0..<64, using: &random)
            fields.isServiceSpecific = Bool.random(using: &random)
            fields.useNonStandardTexts = Bool.random(using: &random)
            fields.purposeOneTreatment = Bool.random(using: &random)
            fields.specialFeatures = Set((1...12).filter { _ in Bool.random(using: &random) })
            fields.purposeConsents = Set((1...24).filter { _ in Bool.random(using: &random) })
            fields.purposeLegitimateInterests = Set((1...24).filter { _ in Bool.random(using: &random) })
            fields.country = (Int.random(in: 0..<26, using: &random), Int.random(in: 0..<26, using: &random))
            var writer = BitWriter()
            fields.write(to: &writer)
            let consents = randomVendors(&random)
            let legitimateInterests = randomVendors(&random)
            for vendors in [consents, legitimateInterests] {
                writeVendors(vendors, to: &writer, random: &random)
            }
            var restrictions: [TCString.PublisherRestriction] = []
            let restrictionCount = Int.random(in: 0...3, using: &random)
            writer.append(restrictionCount, 12, "")
            for _ in 0..<restrictionCount {
                let purpose = Int.random(in: 1...24, using: &random)
                let type = TCString.PublisherRestriction.RestrictionType.allCases.randomElement(using: &random)!
                let vendors = randomVendors(&random)
                writer.append(purpose, 6, "")
                writer.append(TCString.PublisherRestriction.RestrictionType.allCases.firstIndex(of: type)!, 2, "")
                writer.appendVendorRanges(ranges(of: vendors), maximum: nil, prefix: "")
                restrictions.append(
                    TCString.PublisherRestriction(purpose: purpose, type: type, vendors: TCString.IDRanges(vendors)))
            }
            var segments = [writer.base64URL]
            let disclosed = Bool.random(using: &random) ? randomVendors(&random) : nil
            if let disclosed {
                var segment = BitWriter()
                segment.append(1, 3, "")
                writeVendors(disclosed, to: &segment, random: &random)
                segments.append(segment.base64URL)
            }
            let custom = Int.random(in: 0..<64, using: &random)
            let customConsents = Set((0..<custom).map { $0 + 1 }.filter { _ in Bool.random(using: &random) })
            let hasPublisher = Bool.random(using: &random)
            if hasPublisher {
                var segment = BitWriter()
                segment.append(3, 3, "")
                segment.appendBitField(fields.purposeConsents, 24, "")
                segment.appendBitField([], 24, "")
                segment.append(custom, 6, "")
                segment.appendBitField(customConsents, custom, "")
                segment.appendBitField([], custom, "")
                segments.append(segment.base64URL)
            }
            let string = segments.joined(separator: ".")
            let context = "seed \(seed), iteration \(iteration): \(string)"
            if fields.policyVersion >= 4 && !fields.isServiceSpecific {
                // TCF v2.2 has no global scope: the string is invalid, whatever else it says.
                let error = #expect(throws: TCString.DecodingError.self, "\(context)") { try TCString(string) }
                #expect(error?.field == "IsServiceSpecific", "\(context)")
                continue
            }
            if disclosed == nil && fields.created >= 17_723_232_000 {
                // TCF v2.3: created on or after 2026-03-01 without the disclosed-vendors segment is invalid.
                let error = #expect(throws: TCString.DecodingError.self, "\(context)") { try TCString(string) }
                #expect(error?.kind == .invalidSegment && error?.segment == .disclosedVendors, "\(context)")
                continue
            }
            let tc = try TCString(string)
            #expect(Int((tc.created.timeIntervalSince1970 * 10).rounded()) == fields.created, "\(context)")
            #expect(tc.cmpID == fields.cmpID && tc.cmpVersion == fields.cmpVersion, "\(context)")
            #expect(tc.consentScreen == fields.consentScreen, "\(context)")
            #expect(tc.vendorListVersion == fields.vendorListVersion, "\(context)")
            #expect(tc.tcfPolicyVersion == fields.policyVersion, "\(context)")
            #expect(tc.isServiceSpecific == fields.isServiceSpecific, "\(context)")
            #expect(tc.useNonStandardTexts == fields.useNonStandardTexts, "\(context)")
            #expect(tc.purposeOneTreatment == fields.purposeOneTreatment, "\(context)")
            #expect(Set(tc.specialFeatureOptIns) == fields.specialFeatures, "\(context)")
            #expect(Set(tc.purposeConsents) == fields.purposeConsents, "\(context)")
            #expect(Set(tc.purposeLegitimateInterests) == fields.purposeLegitimateInterests, "\(context)")
            #expect(Set(tc.vendorConsents) == consents, "\(context)")
            #expect(Set(tc.vendorLegitimateInterests) == legitimateInterests, "\(context)")
            #expect(tc.publisherRestrictions == restrictions, "\(context)")
            #expect(tc.disclosedVendors.map(Set.init) == disclosed, "\(context)")
            #expect(tc.publisherTC.map { Set($0.customPurposeConsents) } == (hasPublisher ? customConsents : nil))
        }
    }

    private func randomVendors(_ random: inout SeededGenerator) -> Set<Int> {
        let maximum = [0, 1, 63, 64, 65, 300, 2_000][Int.random(in: 0..<7, using: &random)]
        guard maximum > 0 else { return [] }
        return Set((1...maximum).filter { _ in Int.random(in: 0..<4, using: &random) == 0 })
    }

    private func ranges(of vendors: Set<Int>) -> [ClosedRange<Int>] {
        var result: [ClosedRange<Int>] = []
        for id in vendors.sorted() {
            if let last = result.last, last.upperBound + 1 == id {
                result[result.count - 1] = last.lowerBound...id
            } else {
                result.append(id...id)
            }
        }
        return result
    }

    private func writeVendors(_ vendors: Set<Int>, to writer: inout BitWriter, random: inout SeededGenerator) {
        let maximum = (vendors.max() ?? 0) + Int.random(in: 0...2, using: &random)
        if Bool.random(using: &random) {
            writer.appendVendorBitField(vendors, maximum: maximum, prefix: "")
        } else {
            writer.appendVendorRanges(ranges(of: vendors), maximum: maximum, prefix: "")
        }
    }
}
