import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// The pure rules the gate keeps under its lock, stepped directly: seeded random decisions, consent edges and kill
/// switches, with each rule checked after every step.
@Suite struct GateRulesTests {
    static let policy = ConsentPolicy.default
    static let categories = policy.categories

    /// A random set of flags, some outside the built-in catalog.
    static func randomFlags(_ random: inout SeededGenerator) -> Feature {
        Feature(rawValue: UInt(random.next() & 0x3_FFFF) & UInt(random.next() & 0x3_FFFF))
    }

    static func rules(_ random: inout SeededGenerator, isHoldingWrites: Bool = false) -> GateRules {
        let values = randomFlags(&random)
        let stored = FeatureStateRecord(
            enabledFeatures: values, decidedFeatures: values.union(randomFlags(&random)),
            deniedConsentCategories: Set(categories.filter { _ in Bool.random(using: &random) }))
        return GateRules(
            catalog: .builtIn, configured: randomFlags(&random), stored: stored, undecidedSource: .configuration,
            isHoldingWrites: isHoldingWrites, consentPolicy: Bool.random(using: &random) ? policy : nil)
    }

    /// The rules that hold after every step, whatever the step.
    static func checkInvariants(_ rules: GateRules, seed: UInt64, step: Int) {
        let context = "seed \(seed), step \(step)"
        let all = FeatureCatalog.builtIn.allFeatures
        #expect(rules.effective == rules.local.intersection(rules.permitted).subtracting(rules.remote), "\(context)")
        #expect(all.isSuperset(of: rules.effective), "\(context)")
        #expect(rules.record.decidedFeatures.isSuperset(of: rules.record.enabledFeatures), "\(context)")
        #expect(all.isSuperset(of: rules.record.decidedFeatures), "\(context)")
        for flag in all.flags {
            let reason = rules.reason(for: flag)
            #expect(reason.isLocallyEnabled == rules.local.contains(flag), "\(context), \(flag)")
            #expect(reason.isRemotelyDisabled == rules.remote.contains(flag), "\(context), \(flag)")
            #expect(reason.withholdingConsent.isEmpty == rules.permitted.contains(flag), "\(context), \(flag)")
            #expect(
                (reason.source == .configuration) == !rules.record.decidedFeatures.contains(flag), "\(context), \(flag)"
            )
        }
    }

    @Test func everyStepKeepsTheLayersApartAndDecidesOnlyWhatItChanges() {
        let all = FeatureCatalog.builtIn.allFeatures
        for seed in UInt64(1)...200 {
            var random = SeededGenerator(seed: seed)
            var rules = Self.rules(&random)
            var answers: [ConsentCategory: ConsentAnswer] = [:]
            for step in 0..<60 {
                let before = rules
                let context = "seed \(seed), step \(step)"
                switch random.next() % 4 {
                case 0:
                    let enable = Self.randomFlags(&random)
                    let disable = Self.randomFlags(&random)
                    rules.decide(enable: enable, disable: disable)
                    for flag in all.flags {
                        if disable.contains(flag) {
                            #expect(!rules.local.contains(flag), "\(context): disabled \(flag) is on")
                        } else if enable.contains(flag) {
                            #expect(rules.local.contains(flag), "\(context): enabled \(flag) is off")
                        } else {
                            #expect(rules.local.contains(flag) == before.local.contains(flag), "\(context), \(flag)")
                        }
                        if rules.local.contains(flag) != before.local.contains(flag) {
                            #expect(rules.reason(for: flag).source == .app, "\(context), \(flag)")
                        }
                    }
                case 1:
                    let wanted = Self.randomFlags(&random)
                    rules.setEffective(wanted)
                    #expect(
                        rules.effective
                            == wanted.intersection(all).intersection(rules.permitted).subtracting(rules.remote),
                        "\(context)")
                    // A flag hidden before, and not asked for, keeps its local value.
                    for flag in all.subtracting(before.effective).subtracting(wanted).flags {
                        #expect(rules.local.contains(flag) == before.local.contains(flag), "\(context), \(flag)")
                    }
                case 2:
                    let category = Self.categories[Int(random.next() % UInt64(Self.categories.count))]
                    let edge = [ConsentStatus.granted, .denied, .restricted, .unknown][Int(random.next() % 4)]
                    answers[category] = ConsentAnswer(
                        status: edge, decidedAt: ConsentModel.start, source: .user, policyVersion: Self.policy.version)
                    let decisions = Self.policy.decisions(
                        answers: answers, context: ConsentContext(), now: ConsentModel.start)
                    rules.applyConsentEdge(category, edge: edge, policy: Self.policy, decisions: decisions)
                    let features = (Self.policy.features[category] ?? []).intersection(all)
                    switch edge {
                    case .granted:
                        #expect(rules.local.isSuperset(of: features), "\(context)")
                        #expect(rules.record.decidedFeatures.isSuperset(of: features), "\(context)")
                    case .denied, .restricted:
                        #expect(rules.local.isDisjoint(with: features), "\(context)")
                        #expect(rules.record.deniedConsentCategories.contains(category), "\(context)")
                    case .unknown, .expired:
                        #expect(rules.record.decidedFeatures.isDisjoint(with: features), "\(context)")
                        #expect(!rules.record.deniedConsentCategories.contains(category), "\(context)")
                    }
                    for flag in features.flags where edge != .unknown {
                        #expect(rules.reason(for: flag).decidingCategory == category, "\(context), \(flag)")
                    }
                default:
                    rules.setRemote(Self.randomFlags(&random), rules: [:])
                    #expect(rules.record == before.record, "\(context): the kill switch wrote into the record")
                    #expect(rules.local == before.local, "\(context)")
                }
                Self.checkInvariants(rules, seed: seed, step: step)
            }
        }
    }

    @Test func heldWritesKeepWhatChangedAndTakeTheStoredRecordForTheRest() {
        let all = FeatureCatalog.builtIn.allFeatures
        for seed in UInt64(1)...500 {
            var random = SeededGenerator(seed: seed)
            var rules = Self.rules(&random, isHoldingWrites: true)
            #expect(rules.local == rules.record.enabledFeatures, "seed \(seed): an undecided flag is on while held")
            let enable = Self.randomFlags(&random)
            let disable = Self.randomFlags(&random)
            let localBefore = rules.local
            rules.decide(enable: enable, disable: disable)
            let changed = rules.record
            let stored = FeatureStateRecord(
                enabledFeatures: Self.randomFlags(&random), decidedFeatures: all,
                deniedConsentCategories: [.analytics])
            rules.merge(undecidedSource: .configuration, stored: stored)
            #expect(!rules.isHoldingWrites, "seed \(seed)")
            for flag in all.flags {
                // Turning a flag off while held is a decision even when it shows off: the unread record may have it on.
                let isChanged = disable.contains(flag) || (enable.contains(flag) && !localBefore.contains(flag))
                let expected =
                    isChanged ? changed.enabledFeatures.contains(flag) : stored.enabledFeatures.contains(flag)
                #expect(rules.record.enabledFeatures.contains(flag) == expected, "seed \(seed), \(flag)")
            }
            #expect(
                rules.record.deniedConsentCategories.contains(.analytics), "seed \(seed): a stored refusal was lost")
        }
    }
}

/// A refusal another process stored, seen between two of its changes, does not outlast them.
@Suite struct StoredRefusalTests {
    @Test func aStoredRefusalLiftedBeforeTheConsentManagerJudgesAgainGivesBackItsJudgement() {
        let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
        var rules = GateRules(
            catalog: .builtIn, configured: [], stored: FeatureStateRecord(enabledFeatures: [], decidedFeatures: []),
            undecidedSource: .configuration, isHoldingWrites: false, consentPolicy: policy)
        let granted = ConsentAnswer(status: .granted, decidedAt: Date(), source: .user, policyVersion: 1)
        let judged = policy.decisions(answers: [.analytics: granted], context: ConsentContext(), now: Date())
        rules.applyConsentEdge(.analytics, edge: .granted, policy: policy, decisions: judged)
        #expect(rules.effective.contains(.analytics))

        // Another process denied (the state file now refuses), then granted again before this consent manager caught
        // up with the ledger: the category reads as its manager judged it, granted and on.
        let on = FeatureStateRecord(enabledFeatures: .analytics, decidedFeatures: .analytics)
        var refused = FeatureStateRecord(enabledFeatures: [], decidedFeatures: .analytics)
        refused.deniedConsentCategories = [.analytics]
        rules.adopt(refused)
        #expect(!rules.effective.contains(.analytics))
        rules.adopt(on)
        #expect(rules.effective.contains(.analytics), "\(rules.reason(for: .analytics))")

        // A refusal the consent manager itself judged in between stays.
        rules.adopt(refused)
        let denied = ConsentAnswer(status: .denied, decidedAt: Date(), source: .user, policyVersion: 1)
        rules.consent = GateRules.ConsentLayer(
            policy: policy,
            decisions: policy.decisions(answers: [.analytics: denied], context: ConsentContext(), now: Date()))
        rules.adopt(on)
        #expect(!rules.effective.contains(.analytics))
    }
}
