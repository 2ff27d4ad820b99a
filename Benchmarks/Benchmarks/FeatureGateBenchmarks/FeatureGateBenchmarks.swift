import Benchmark

/// The benchmark target's entry point: every group registers its benchmarks here, numbered as in the issue that asked
/// for them. One file per group; budgets in `Budgets.swift` (allocations), `Thresholds/` and `report.py` (ratios).
let benchmarks: @Sendable () -> Void = {
    registerGateBenchmarks()  // 1, 2: isEnabled and the raw-load floor, on one thread and contended
    registerAirshipStyleBenchmarks()  // 3: the NSRecursiveLock gate, read and write paths
    registerGatedIOBenchmarks()  // 4: a gated transport call and event-buffer `track` with the gate closed
    registerObserverBenchmarks()  // 5: toggling a feature with 0, 1, 10 and 100 observers
    registerConfigBenchmarks()  // 6: loading a config as XML plist, binary plist and JSON beside a bare decode
    registerStartupBenchmarks()  // 7: start-up with a 1,000-record ledger beside a bare decode; a consent change
    registerTCFBenchmarks()  // issue 13: decoding a TC string with 1,000 vendors (reported, not budgeted)
    registerLedgerSeriesBenchmarks()  // issue 17: launch and one consent change over 10 / 1,000 / 100,000 records
    registerEventTrackBenchmarks()  // issue 37: `track` with the gate open beside a locked append and a Task per event
    registerDeviceCostBenchmarks()  // issue 47: flushes per operation and the caller's time of each take-away
    registerHarnessBenchmarks()  // proves the allocation counter is live; the floor under async benchmarks
}
