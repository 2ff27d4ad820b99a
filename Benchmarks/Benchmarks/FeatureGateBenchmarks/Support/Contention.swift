import Benchmark
import FeatureGate
import Foundation
import Synchronization

/// A gate as the contention harness drives it: checks from readers, flips from a writer.
///
/// Every gate checks the same flag (`.analytics`, always on) and flips a different one in the same word (`.push`), so
/// readers always get the same answer while the writer keeps invalidating the word they read.
protocol ContendedGate: Sendable {
    /// One check, as an SDK's hot path makes it.
    func check() -> Bool
    /// Turns `.push` on or off through the gate's own write path.
    func flip(_ on: Bool)
}

extension PrivacyManager: ContendedGate {
    func check() -> Bool {
        isEnabled(.analytics)
    }

    /// Flips through the remote kill switch: a real change of the effective set that every reader sees, and one
    /// that neither persists nor allocates, so the read side's allocation budget can be checked while it runs.
    func flip(_ on: Bool) {
        remoteDisabledFeatures = on ? [] : .push
    }
}

/// What a contended benchmark records per sample, besides time and allocations.
enum ContentionMetric {
    /// How many times the toggler flipped while the sample ran, so a report can show that every gate ran under the
    /// same contention.
    static var flips: BenchmarkMetric {
        .custom("Toggler flips", polarity: .prefersLarger, useScalingFactor: false)
    }

    /// How much of the sample the two readers spent running at the same time, in percent. On a busy two-core machine
    /// the readers can end up taking turns on one core; then nothing contends and the sample says nothing about
    /// contention, which a report must say instead of printing a ratio as if it did.
    static var overlap: BenchmarkMetric {
        .custom("Reader overlap pct", polarity: .prefersLarger, useScalingFactor: false)
    }

    /// Both, for a benchmark's configuration.
    static var all: [BenchmarkMetric] { [flips, overlap] }
}

/// Nanoseconds on the monotonic clock, read without allocating.
func monotonicNanoseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

#if os(Linux)
/// glibc's `sched_getaffinity` / `sched_setaffinity`, which Swift's Glibc module leaves out (they need `_GNU_SOURCE`).
private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
private let getAffinity = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_getaffinity").map {
    unsafeBitCast($0, to: AffinityCall.self)
}
private let setAffinity = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity").map {
    unsafeBitCast($0, to: AffinityCall.self)
}
/// A CPU set as the kernel takes it: 1024 bits.
private typealias CPUSet = (
    UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
    UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
)
#endif

/// The two CPUs the readers run on: the first two this process may use, or nil with fewer than two (or off Linux).
private let readerCPUs: (measured: Int, second: Int)? = {
    #if os(Linux)
    guard let getAffinity else { return nil }
    var allowed: CPUSet = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    let status = withUnsafeMutableBytes(of: &allowed) { getAffinity(0, $0.count, $0.baseAddress!) }
    guard status == 0 else { return nil }
    let cpus = withUnsafeBytes(of: allowed) { bytes in
        (0..<(bytes.count * 8)).filter { bytes[$0 / 8] & (1 << ($0 % 8)) != 0 }
    }
    return cpus.count >= 2 ? (cpus[0], cpus[1]) : nil
    #else
    return nil
    #endif
}()

/// Pins the calling thread to `cpu` (Linux only).
private func pinCurrentThread(to cpu: Int) {
    #if os(Linux)
    var set: CPUSet = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeMutableBytes(of: &set) { bytes in
        bytes[cpu / 8] |= 1 << (cpu % 8)
        _ = setAffinity?(0, bytes.count, bytes.baseAddress!)
    }
    #endif
}

/// Which of a ``Contention``'s two gates a batch of checks goes to.
enum ContendedSide: Int {
    case first, second
}

/// "Two threads read while a third toggles a flag", built the same way around every gate so that contended results
/// compare like with like.
///
/// The benchmark's own thread is one reader. For each batch it hands the second reader the same number of checks on
/// the same gate (``startReader(calls:on:)``), makes its own, and waits for the second reader to finish
/// (``waitForReader()``): a batch takes as long as both threads need to get their checks done. Measuring only one
/// thread would flatter a lock, which can let one reader run while it parks the other.
///
/// A harness may hold two gates, for paired samples: one sample times a batch on each, back to back, under the same
/// conditions, so that load from other processes on a shared machine hits both sides of a ratio alike. Its toggler
/// flips both gates each period.
///
/// The two readers are pinned to two different CPUs, the same two for every gate. Left to itself, Linux moves a thread
/// woken from a lock's futex onto the waker's CPU, so a lock-based gate would end up with its readers taking turns on
/// one core: the scheduler, not the gate, would decide what is measured.
///
/// Waits spin briefly and then yield the core, so that the threads still make progress when other processes leave the
/// two readers only one core between them.
///
/// The toggler flips once per ``togglePeriodMicroseconds`` (plus the scheduler's slack) and sleeps in between: on a
/// two-core machine a spinning toggler would take a core from the readers, and the measurement would be about the
/// scheduler instead of the gate. Threads start in the benchmark's `setup` and stop in its `teardown`; ``start()``
/// returns only once both are in their loops and each write path has run once, so no thread start-up or first-use
/// allocation lands in a measured sample. The loops themselves allocate nothing.
final class Contention<First: ContendedGate, Second: ContendedGate>: Sendable {
    /// How long the toggler sleeps between flips.
    static var togglePeriodMicroseconds: UInt32 { 20 }

    private let first: First
    private let second: Second?
    private let running = Atomic<Bool>(false)
    private let toggles = Atomic<Int>(0)
    private let batch = Atomic<Int>(0)
    private let batchSide = Atomic<Int>(0)
    private let batchesStarted = Atomic<Int>(0)
    private let batchesDone = Atomic<Int>(0)
    // Batch timings for ContentionMetric.overlap: the reader's run, the measured thread's run, and the running sums
    // (overlapping nanoseconds, spanned nanoseconds) since the last recorded sample.
    private let readerStart = Atomic<Int>(0)
    private let readerEnd = Atomic<Int>(0)
    private let measuredStart = Atomic<Int>(0)
    private let overlapped = Atomic<Int>(0)
    private let spanned = Atomic<Int>(0)
    private let ready = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    /// A harness around one gate.
    init(_ gate: First) where Second == First {
        first = gate
        second = nil
    }

    /// A harness around two gates, for paired samples.
    init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    /// Starts the second reader and the toggler, and returns once both are running.
    func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        Thread { [self] in
            if let readerCPUs { pinCurrentThread(to: readerCPUs.second) }
            var hits = 0
            var seen = batchesStarted.load(ordering: .acquiring)
            ready.signal()
            var idle = 0
            while running.load(ordering: .relaxed) {
                let started = batchesStarted.load(ordering: .acquiring)
                guard started != seen else {
                    idle = Self.pause(after: idle)
                    continue
                }
                idle = 0
                seen = started
                readerStart.store(monotonicNanoseconds(), ordering: .relaxed)
                let calls = batch.load(ordering: .relaxed)
                if batchSide.load(ordering: .relaxed) == ContendedSide.first.rawValue {
                    for _ in 0..<calls { hits &+= first.check() ? 1 : 0 }
                } else if let second {
                    for _ in 0..<calls { hits &+= second.check() ? 1 : 0 }
                }
                readerEnd.store(monotonicNanoseconds(), ordering: .relaxed)
                batchesDone.store(started, ordering: .releasing)
            }
            blackHole(hits)
            exited.signal()
        }.start()
        Thread { [self] in
            flipAll(false)
            flipAll(true)
            ready.signal()
            var on = true
            while running.load(ordering: .relaxed) {
                on.toggle()
                flipAll(on)
                toggles.add(1, ordering: .relaxed)
                usleep(Self.togglePeriodMicroseconds)
            }
            flipAll(true)
            exited.signal()
        }.start()
        ready.wait()
        ready.wait()
    }

    private func flipAll(_ on: Bool) {
        first.flip(on)
        second?.flip(on)
    }

    /// Pins the calling thread, the measured reader, to its CPU, then starts `benchmark`'s measured region. Call it
    /// first thing in the benchmark closure.
    func beginMeasuredReader(_ benchmark: Benchmark) {
        if let readerCPUs { pinCurrentThread(to: readerCPUs.measured) }
        benchmark.startMeasurement()
    }

    /// Hands the second reader `calls` checks to make now, on the gate of `side`.
    func startReader(calls: Int, on side: ContendedSide = .first) {
        measuredStart.store(monotonicNanoseconds(), ordering: .relaxed)
        batch.store(calls, ordering: .relaxed)
        batchSide.store(side.rawValue, ordering: .relaxed)
        batchesStarted.add(1, ordering: .releasing)
    }

    /// Waits until the second reader has made the checks handed to it by ``startReader(calls:on:)``.
    func waitForReader() {
        let measuredEnd = monotonicNanoseconds()
        let started = batchesStarted.load(ordering: .relaxed)
        var spins = 0
        while batchesDone.load(ordering: .acquiring) != started {
            spins = Self.pause(after: spins)
        }
        let start = measuredStart.load(ordering: .relaxed)
        let (otherStart, otherEnd) = (readerStart.load(ordering: .relaxed), readerEnd.load(ordering: .relaxed))
        overlapped.add(max(0, min(measuredEnd, otherEnd) - max(start, otherStart)), ordering: .relaxed)
        spanned.add(max(measuredEnd, otherEnd) - min(start, otherStart), ordering: .relaxed)
    }

    /// One step of a wait: spins for a while, then yields the core on every step. When the machine is busy and both
    /// readers end up on one core, a waiter that only spun would hold it until the scheduler took it away (a whole
    /// time slice, milliseconds) while the thread it waits for could not run.
    private static func pause(after spins: Int) -> Int {
        if spins >= 1_000 { sched_yield() }
        return spins + 1
    }

    /// How many times the toggler has flipped so far.
    var flips: Int {
        toggles.load(ordering: .relaxed)
    }

    /// Ends `benchmark`'s measured region, then records the flips made since `flipsAtStart` and how much the readers
    /// overlapped in this sample's batches (``ContentionMetric``).
    func recordContention(flipsAtStart: Int, in benchmark: Benchmark) {
        benchmark.stopMeasurement()
        benchmark.measurement(ContentionMetric.flips, flips - flipsAtStart)
        let overlap = overlapped.exchange(0, ordering: .relaxed)
        let span = spanned.exchange(0, ordering: .relaxed)
        benchmark.measurement(ContentionMetric.overlap, span > 0 ? overlap * 100 / span : 0)
    }

    /// Stops both threads and waits until they have exited.
    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        exited.wait()
        exited.wait()
    }
}
