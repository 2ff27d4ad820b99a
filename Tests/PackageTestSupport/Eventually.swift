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
