import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// How an age range was declared and the parental controls active: kept with the answer, restored across launches
/// (older records without them read as the least trusted kind), and deciding, under the policy's
/// `adultRangeDeclaration`, whether an adult range lifts the child mark.
@Suite struct AgeRangeDeclarationTests {
    static let controlSets: [AgeRangeParentalControls] = [
        [], .communicationLimits, [.communicationLimits, .significantAppChangeApprovalRequired], .unrecognized,
    ]

    /// Whether `declaration` lifts the mark under `requirement`, written out per kind (not derived from the rule).
    static func lifts(_ declaration: AgeRangeDeclaration, under requirement: AdultRangeDeclaration) -> Bool {
        switch (requirement, declaration) {
        case (.any, _): true
        case (.guardianOrChecked, .guardianDeclared), (.guardianOrChecked, .checkedByOtherMethod),
            (.guardianOrChecked, .governmentIDChecked), (.guardianOrChecked, .guardianPaymentChecked),
            (.guardianOrChecked, .confirmed):
            true
        case (.checked, .checkedByOtherMethod), (.checked, .governmentIDChecked), (.checked, .guardianPaymentChecked),
            (.checked, .confirmed):
            true
        default: false
        }
    }

    @Test(arguments: AdultRangeDeclaration.allCases)
    func anAdultRangeLiftsTheMarkOnlyWithADeclarationThePolicyAccepts(requirement: AdultRangeDeclaration) {
        let rule = ChildAgeRule(childUnderAge: 16, adultRangeDeclaration: requirement)
        for declaration in AgeRangeDeclaration.allCases {
            for controls in Self.controlSets {
                let adult = AgeRangeAnswer.range(
                    lowerBound: 18, upperBound: nil, declaration: declaration, parentalControls: controls)
                #expect(rule.isChild(adult) == !Self.lifts(declaration, under: requirement), "\(declaration)")
                // A child's range is a child's whatever the declaration; so is one that straddles the age.
                #expect(rule.isChild(.range(lowerBound: 13, upperBound: 15, declaration: declaration)))
                #expect(rule.isChild(.range(lowerBound: 13, upperBound: nil, declaration: declaration)))
            }
        }
        #expect(rule.isChild(.declined))
    }

    @Test func theDefaultIsAnyDeclarationAsBefore() {
        #expect(ChildAgeRule().adultRangeDeclaration == .any)
        #expect(ConsentPolicy.default.childAge.adultRangeDeclaration == .any)
        #expect(!ChildAgeRule().isChild(.range(lowerBound: 18, upperBound: nil)))
        // A range built without a declaration is the least trusted kind.
        #expect(
            AgeRangeAnswer.range(lowerBound: 18, upperBound: nil)
                == .range(
                    lowerBound: 18, upperBound: nil, declaration: .unspecified, parentalControls: []))
    }

    static func temporaryStore() throws -> (FileAgeRangeAnswerStore, URL) {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "age-kind-\(UUID().uuidString)")
        return (FileAgeRangeAnswerStore(directory: PrivacyDataDirectory(url: directory)), directory)
    }

    @Test func everyKindAndControlStateRoundTripsThroughTheFileAndDecidesTheMarkAfterARelaunch() async throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        for requirement in AdultRangeDeclaration.allCases {
            let policy = ConsentPolicy(
                version: 1, features: [.analytics: .analytics], childProhibited: [.analytics],
                childAge: ChildAgeRule(childUnderAge: 16, adultRangeDeclaration: requirement))
            for declaration in AgeRangeDeclaration.allCases {
                for controls in Self.controlSets {
                    let answer = AgeRangeAnswer.range(
                        lowerBound: 18, upperBound: nil, declaration: declaration, parentalControls: controls)
                    try store.save(answer)
                    #expect(try store.load() == answer)
                    // A relaunch: a new manager and source on the same file.
                    let manager = ConsentManager(
                        privacy: PrivacyManager(
                            configuration: PrivacyConfiguration(enabledFeatures: .analytics),
                            store: InMemoryFeatureStore(), consentPolicy: policy),
                        ledger: InMemoryConsentLedger())
                    #expect(try await AgeSignalSource(consentManager: manager, store: store).restore() == answer)
                    let isChild = !Self.lifts(declaration, under: requirement)
                    #expect(await manager.context.isChild == isChild, "\(requirement) \(declaration) \(controls)")
                }
            }
        }
    }

    @Test func theFileNamesTheKindAndTheControls() throws {
        let (store, directory) = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        try store.save(
            .range(
                lowerBound: 13, upperBound: 15, declaration: .guardianDeclared, parentalControls: .communicationLimits))
        let text = String(decoding: try Data(contentsOf: store.url), as: UTF8.self)
        #expect(text.contains(#""declaration":"guardianDeclared""#))
        #expect(text.contains(#""parentalControls":["communicationLimits"]"#))
        #expect(text.contains(#""version":1"#))
    }

    /// Kept answers and what they read as: the stored JSON, the declaration, the parental controls.
    static let records: [(String, AgeRangeDeclaration, AgeRangeParentalControls)] = [
        // Written before declarations were kept: no declaration, no controls.
        (#"{"version":1,"answer":{"range":{"lowerBound":18}}}"#, .unspecified, []),
        (#"{"version":1,"answer":{"range":{"lowerBound":18,"upperBound":null}}}"#, .unspecified, []),
        // Written by a newer version: a kind and a control this one does not know.
        (
            #"{"version":1,"answer":{"range":{"lowerBound":18,"declaration":"retinaChecked","#
                + #""parentalControls":["communicationLimits","bedtime"]}}}"#,
            .unspecified, [.communicationLimits, .unrecognized]
        ),
    ]

    @Test(arguments: records)
    func olderAndNewerRecordsReadAsTheLeastTrustedKind(
        json: String, declaration: AgeRangeDeclaration, controls: AgeRangeParentalControls
    ) async throws {
        let (store, directory) = try Self.temporaryStore()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(json.utf8).write(to: store.url)
        let expected = AgeRangeAnswer.range(
            lowerBound: 18, upperBound: nil, declaration: declaration, parentalControls: controls)
        #expect(try store.load() == expected)
        // As before under the default policy (any declaration lifts); kept marked where a guardian or check is
        // required.
        #expect(!ChildAgeRule().isChild(expected))
        #expect(ChildAgeRule(adultRangeDeclaration: .guardianOrChecked).isChild(expected))
    }

    @Test func aDeclinedRecordStillReads() throws {
        let (store, directory) = try Self.temporaryStore()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"version":1,"answer":{"declined":{}}}"#.utf8).write(to: store.url)
        #expect(try store.load() == .declined)
        try store.save(.declined)
        #expect(try store.load() == .declined)
        try Data(#"{"version":1,"answer":{}}"#.utf8).write(to: store.url)
        #expect(throws: AgeRangeAnswerStoreError.self) { try store.load() }
    }
}
