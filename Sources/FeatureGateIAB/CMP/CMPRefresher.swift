import FeatureGate

/// Refreshes a ``CMPConsentSource`` when told that its keys changed: one refresh at a time, once the keys settle.
///
/// A CMP writes its keys one by one, and `UserDefaults` posts a change after each write (and after every other
/// defaults write in the app, FeatureGate's own included). Refreshing on each would read half-written answers and
/// apply them. The refresher coalesces instead: a change starts a wait of `settle`, a change during the wait starts
/// it again, and then one snapshot is read; a snapshot identical to the last one applied is skipped, any other is
/// applied whole. Changes that arrive during a refresh lead to one more refresh after it, never to two at once.
///
/// On Apple platforms `CMPConsentSource.refreshOnUserDefaultsChanges(settle:)` feeds one from `UserDefaults`;
/// elsewhere, call ``keysChanged()`` from whatever tells you the keys changed.
public final class CMPRefresher: Sendable {
    private struct State {
        var changes = 0
        var running = false
        var stopped = false
    }

    private let state = LockedValue(State())
    private let source: CMPConsentSource
    private let settle: Duration
    private let sleep: @Sendable (Duration) async -> Void

    /// Creates a refresher for `source` that waits until no change arrived for `settle` before reading.
    public convenience init(source: CMPConsentSource, settle: Duration = .milliseconds(250)) {
        self.init(source: source, settle: settle) { duration in try? await Task.sleep(for: duration) }
    }

    /// The same, with the wait injected (tests hold it until they let it pass).
    package init(source: CMPConsentSource, settle: Duration, sleep: @escaping @Sendable (Duration) async -> Void) {
        self.source = source
        self.settle = settle
        self.sleep = sleep
    }

    /// Says that the keys may have changed. Cheap and safe from any thread; never refreshes on the caller's thread.
    public func keysChanged() {
        let start = state.withLock { state in
            guard !state.stopped else { return false }
            state.changes &+= 1
            if state.running { return false }
            state.running = true
            return true
        }
        if start { Task { await self.run() } }
    }

    /// Stops: no refresh starts after this returns (one already reading the keys finishes). Final.
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Whether no refresh is waiting or under way.
    package var isIdle: Bool { state.withLock { !$0.running } }

    private func run() async {
        var seen = state.withLock { $0.changes }
        while true {
            // Wait until a whole `settle` passes with no change.
            while true {
                await sleep(settle)
                let (changes, stopped) = state.withLock { ($0.changes, $0.stopped) }
                if stopped {
                    state.withLock { $0.running = false }
                    return
                }
                if changes == seen { break }
                seen = changes
            }
            await source.refreshIfChanged(unless: { [state] in state.withLock { $0.stopped } })
            let done = state.withLock { state in
                guard state.changes == seen, !state.stopped else { return false }
                state.running = false
                return true
            }
            if done { return }
            seen = state.withLock { $0.changes }
        }
    }
}
