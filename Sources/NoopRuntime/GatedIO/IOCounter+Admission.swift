import FeatureGate

extension IOCounter {
    /// The gate of the gated wrappers: whether all of `features` are enabled on `privacy`, counted as `operation`
    /// allowed or refused. One atomic load and the counts; allocation-free, and inlined into the wrappers' callers.
    ///
    /// - Throws: ``GatedIOError/gateClosed(_:)`` when any of `features` is disabled.
    @inlinable
    func admit(_ operation: Operation, _ features: Feature, of privacy: PrivacyManager) throws(GatedIOError) {
        guard privacy.isEnabled(features) else {
            record(operation, .refused, for: features)
            throw .gateClosed(features)
        }
        record(operation, .allowed, for: features)
    }
}
