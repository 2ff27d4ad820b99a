import FeatureGate
import Testing

/// The C11 atomic word behind the gate (and every lock-free counter of the package), hammered from many tasks.
/// Runs under ThreadSanitizer in CI (`--filter Concurrency`): a non-atomic access would be reported as a race.
@Suite struct AtomicWordConcurrencyTests {
    final class Box: Sendable {
        let counter = AtomicWord<Int>(0)
        let bits = AtomicWord<UInt>(0)
        let winner = AtomicWord<UInt8>(0)
        let wins = AtomicWord<Int>(0)
        let flag = AtomicWord<Bool>(false)
        let slots = AtomicWordBuffer<Int>(repeating: 0, count: 8)
    }

    @Test func concurrentAddsSetsAndClearsLoseNothing() async {
        let box = Box()
        let tasks = 16
        let rounds = 5_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    let bit = UInt(1) << UInt(task)
                    for round in 0..<rounds {
                        box.counter.wrappingAdd(1, ordering: .relaxed)
                        box.slots[round % 8].add(1, ordering: .relaxed)
                        box.bits.bitwiseOr(bit, ordering: .acquiringAndReleasing)
                        #expect(box.bits.load(ordering: .acquiring) & bit == bit)
                        box.bits.bitwiseAnd(~bit, ordering: .acquiringAndReleasing)
                    }
                    box.bits.bitwiseOr(bit, ordering: .releasing)
                }
            }
        }
        #expect(box.counter.load(ordering: .acquiring) == tasks * rounds)
        #expect((0..<8).reduce(0) { $0 + box.slots[$1].load(ordering: .relaxed) } == tasks * rounds)
        #expect(box.bits.load(ordering: .acquiring) == (UInt(1) << UInt(tasks)) - 1)
    }

    @Test func compareExchangeHasExactlyOneWinnerPerRound() async {
        let box = Box()
        let rounds = 2_000
        for round in 1...rounds {
            let expected = UInt8(truncatingIfNeeded: round - 1)
            let desired = UInt8(truncatingIfNeeded: round)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let result = box.winner.compareExchange(
                            expected: expected, desired: desired, ordering: .acquiringAndReleasing)
                        if result.exchanged {
                            box.wins.add(1, ordering: .relaxed)
                        } else {
                            #expect(result.original == desired)
                        }
                    }
                }
            }
        }
        #expect(box.wins.load(ordering: .acquiring) == rounds)
    }

    @Test func exchangeHandsTheFlagToOneTakerAtATime() async {
        let box = Box()
        let takers = 8
        let rounds = 2_000
        await withTaskGroup(of: Int.self) { group in
            group.addTask {
                var raised = 0
                for _ in 0..<rounds where !box.flag.exchange(true, ordering: .acquiringAndReleasing) { raised += 1 }
                return -raised
            }
            for _ in 0..<takers {
                group.addTask {
                    var taken = 0
                    for _ in 0..<rounds where box.flag.exchange(false, ordering: .acquiringAndReleasing) { taken += 1 }
                    return taken
                }
            }
            var balance = 0
            for await count in group { balance += count }
            // Every raise was taken at most once; what is still raised accounts for the rest.
            #expect(balance + (box.flag.load(ordering: .acquiring) ? 1 : 0) == 0)
        }
    }

    @Test func storeThenLoadRoundTripsEveryRepresentableValue() {
        let word = AtomicWord<Int>(-1)
        #expect(word.load(ordering: .relaxed) == -1)
        word.store(Int.min, ordering: .releasing)
        #expect(word.load(ordering: .acquiring) == Int.min)
        #expect(word.wrappingAdd(-1, ordering: .relaxed).newValue == Int.max)
        let small = AtomicWord<UInt8>(255)
        #expect(small.load(ordering: .sequentiallyConsistent) == 255)
        #expect(small.exchange(7, ordering: .relaxed) == 255)
        #expect(small.load(ordering: .relaxed) == 7)
    }
}
