import FeatureGate
import NoopRuntime

/// Waits until `condition` holds, checking it up to `turns` times with a 5 ms sleep between (2,000 turns take about
/// 10 s on an idle machine).
///
/// Counted in turns, not in wall-clock time: the check and the work it waits for share the cooperative pool with
/// every other test, and a pool busy with them delays both alike, so a busy machine does not make it give up early.
public func eventually(turns: Int, _ condition: () async -> Bool) async -> Bool {
    for _ in 0..<turns {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// Starts `revocation.revokeAll()` in a task of its own and waits, in turns (as ``eventually(turns:_:)``), until it
/// returns: its report, or `nil` when it had not returned after `turns` (it waited for something it must not).
public func revokeAllReturning(_ revocation: ConsentRevocation, turns: Int = 2_000) async -> RevocationReport? {
    let report = LockedValue<RevocationReport?>(nil)
    Task {
        let done = await revocation.revokeAll()
        report.withLock { $0 = done }
    }
    _ = await eventually(turns: turns) { report.withLock { $0 } != nil }
    return report.withLock { $0 }
}
