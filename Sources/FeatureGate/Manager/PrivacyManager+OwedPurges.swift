import Foundation

// MARK: - Purges a "no" owes

extension PrivacyManager {
    /// The flags a "no" switched off whose subsystems' purge is not known to be done, as the store last recorded
    /// them (``FeatureStateRecord/purgeOwedFeatures``: read at start-up, then after each save and each reload).
    ///
    /// A save that decides a flag off records it in the same write, so it survives a kill between the "no" and the
    /// purge; `SubsystemRuntime.start()` purges what it finds here, and the runtime removes each flag once it
    /// purged the flag's subsystems (``purgesFinished(_:)``).
    package var owedPurges: Feature { state.withLock { $0.owedPurges } }

    /// Records that the subsystems of `features` were purged: removes them from the owed purges, in the store (a
    /// read-modify-write under its lock, waited for at most ``AtomicFile/lockWaitBound``) and in memory.
    ///
    /// Touches nothing when none of `features` is owed. When the lock stays busy, or the write fails, they stay owed
    /// and the next start purges them again: a purge with nothing to delete deletes nothing.
    package func purgesFinished(_ features: Feature) {
        guard !owedPurges.isDisjoint(with: features) else { return }
        _ = withStoreLock {
            state.withLock { state in
                do {
                    try store.update { data in
                        guard let data, var record = try? FeatureStateRecord(decoding: data),
                            !record.purgeOwedFeatures.isDisjoint(with: features)
                        else { return nil }
                        record.purgeOwedFeatures.subtract(features)
                        return record.encoded()
                    }
                    state.owedPurges.subtract(features)
                } catch {
                    // Still owed: the next start purges again.
                }
            }
        }
    }
}
