#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Declared age ranges → the child mark: the rule (threshold, straddling ranges, declined), and the source that
/// applies answers to a consent manager and keeps the last one across launches.
@Suite struct AgeSignalTests {
    @Test(arguments: [
        (AgeRangeAnswer.range(lowerBound: 18, upperBound: nil), false),
        (.range(lowerBound: 13, upperBound: 15), false),
        (.range(lowerBound: 13, upperBound: nil), false),
        (.range(lowerBound: nil, upperBound: 12), true),
        (.range(lowerBound: 0, upperBound: 12), true),
        // Straddling the threshold: might be a child, so it is one.
        (.range(lowerBound: 10, upperBound: 15), true),
        (.range(lowerBound: nil, upperBound: nil), true),
        // Nonsense fails closed.
        (.range(lowerBound: 20, upperBound: 15), true),
        (.range(lowerBound: -1, upperBound: nil), true),
        (.declined, true),
    ])
    func theDefaultRuleIsUnderThirteenOrDeclined(answer: AgeRangeAnswer, isChild: Bool) {
        #expect(ChildAgeRule().isChild(answer) == isChild)
    }

    @Test func theThresholdAndDeclinedFollowThePolicy() {
        let rule = ChildAgeRule(childUnderAge: 16, declinedIsChild: false)
        #expect(rule.isChild(.range(lowerBound: 13, upperBound: 15)))
        #expect(rule.isChild(.range(lowerBound: 13, upperBound: 17)))
        #expect(!rule.isChild(.range(lowerBound: 16, upperBound: 17)))
        #expect(!rule.isChild(.declined))
        #expect(ChildAgeRule(childUnderAge: 0).childUnderAge == 1)
    }

    static let policy = ConsentPolicy(
        version: 1, features: [.analytics: .analytics, .advertising: []], childProhibited: [.analytics],
        childAge: ChildAgeRule(childUnderAge: 16))

    static func manager(_ ledger: InMemoryConsentLedger = InMemoryConsentLedger()) -> ConsentManager {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .analytics), store: InMemoryFeatureStore(),
            consentPolicy: policy)
        return ConsentManager(privacy: privacy, ledger: ledger)
    }

    @Test func anAnswerSetsTheChildMarkAndTheMarkHoldsAcrossLaunchesUntilTheNextAnswer() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "age-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileAgeRangeAnswerStore(directory: PrivacyDataDirectory(url: directory))
        let ledger = InMemoryConsentLedger()

        let first = Self.manager(ledger)
        let source = AgeSignalSource(consentManager: first, store: store)
        #expect(try await source.restore() == nil)
        #expect(await first.context.isChild == false)
        #expect(try await source.apply(.range(lowerBound: 13, upperBound: 15)))
        #expect(await first.context.isChild)

        // The next launch: nothing set by hand, the kept answer marks the user again.
        let second = Self.manager(ledger)
        #expect(await second.context.isChild == false)
        let relaunched = AgeSignalSource(consentManager: second, store: store)
        #expect(try await relaunched.restore() == .range(lowerBound: 13, upperBound: 15))
        #expect(await second.context.isChild)

        // The next answer replaces it.
        #expect(try await relaunched.apply(.range(lowerBound: 18, upperBound: nil)) == false)
        #expect(await second.context.isChild == false)
        let third = Self.manager(ledger)
        try await AgeSignalSource(consentManager: third, store: store).restore()
        #expect(await third.context.isChild == false)
    }

    @Test func anAnswerDoesNotWaitForAStoppedProcessThatHoldsTheLock() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "age-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory)
        let consent = Self.manager(InMemoryConsentLedger())
        let source = AgeSignalSource(consentManager: consent, store: FileAgeRangeAnswerStore(directory: data))
        let holder = try StoppedLockHolder(directory: data.url)
        defer { holder.release() }

        let outcome = LockedValue<Result<Bool, AgeRangeAnswerStoreError>?>(nil)
        Task {
            do throws(AgeRangeAnswerStoreError) {
                let isChild = try await source.apply(.range(lowerBound: 13, upperBound: 15))
                outcome.withLock { $0 = .success(isChild) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        #expect(await eventually(turns: 2_000) { outcome.withLock { $0 } != nil })
        // Not kept (the lock was not free), but the child mark, a take-away, applies anyway.
        #expect(throws: AgeRangeAnswerStoreError.self) { try outcome.withLock { $0 }?.get() }
        #expect(await consent.context.isChild)
    }

    @Test func restoringWritesNothingAndAMissingAnswerChangesNothing() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "age-\(UUID().uuidString)")
        let store = FileAgeRangeAnswerStore(directory: PrivacyDataDirectory(url: directory))
        let manager = Self.manager()
        #expect(try await AgeSignalSource(consentManager: manager, store: store).restore() == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path(percentEncoded: false)))
        #expect(await manager.context.isChild == false)
    }

    @Test func anUnreadableKeptAnswerFailsClosed() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "age-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileAgeRangeAnswerStore(directory: PrivacyDataDirectory(url: directory))
        try Data(#"{"version": 1, "answer": "teen"}"#.utf8).write(to: store.url)
        let manager = Self.manager()
        await #expect(throws: AgeRangeAnswerStoreError.self) {
            try await AgeSignalSource(consentManager: manager, store: store).restore()
        }
        #expect(await manager.context.isChild)
    }

    @Test func theChildMarkWithholdsChildProhibitedCategoriesAtOnce() async throws {
        let manager = Self.manager()
        try await manager.setStatus(.granted, for: .analytics, source: .user)
        #expect(manager.privacy.isEnabled(.analytics))
        let source = AgeSignalSource(consentManager: manager, store: InMemoryAgeRangeAnswerStore())
        try await source.apply(.declined)
        #expect(!manager.privacy.isEnabled(.analytics))
        try await source.apply(.range(lowerBound: 16, upperBound: 17))
        #expect(manager.privacy.isEnabled(.analytics))
    }
}

/// Many answers at once: they are applied in the order made, and the kept answer and the mark always agree.
@Suite struct AgeSignalConcurrencyTests {
    @Test func concurrentAnswersLeaveTheKeptAnswerAndTheMarkInAgreement() async throws {
        let store = InMemoryAgeRangeAnswerStore()
        let manager = AgeSignalTests.manager()
        let source = AgeSignalSource(consentManager: manager, store: store)
        let answers: [AgeRangeAnswer] = [
            .declined, .range(lowerBound: 18, upperBound: nil), .range(lowerBound: 13, upperBound: 15),
            .range(lowerBound: 16, upperBound: 17),
        ]
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2_000 {
                group.addTask { _ = try? await source.apply(answers[index % answers.count]) }
                if index % 100 == 0 { group.addTask { _ = try? await source.restore() } }
            }
        }
        let kept = try #require(store.load())
        #expect(await manager.context.isChild == AgeSignalTests.policy.childAge.isChild(kept))
        #expect(manager.privacy.isEnabled(.analytics) == false || !AgeSignalTests.policy.childAge.isChild(kept))
    }
}
#endif
