import FeatureGate
import Foundation

/// A ``Storage`` that reaches the SDK's real store only while its features are enabled.
///
/// Every call checks the gate first (one atomic load). While any of ``features`` is disabled, the call throws
/// ``GatedIOError/gateClosed(_:)`` without touching the inner store and without allocating, and the refusal is
/// counted in the ledger. While open, the call goes to the inner store and is counted as allowed.
///
/// ``purge()`` is the exception: it deletes through a closed gate, because a purge runs right after the gate
/// closes. It is counted as a purge, not as storage.
public struct GatedStorage: Sendable {
    /// The features that must all be enabled for a call to go through.
    public let features: Feature
    @usableFromInline let privacy: PrivacyManager
    @usableFromInline let inner: any Storage
    @usableFromInline let ledger: IOLedger

    /// Wraps `inner`, gated on `features` (all of them) of `privacy`, counting into `ledger`.
    ///
    /// - Precondition: `features` is not empty.
    public init(_ inner: any Storage, features: Feature, privacy: PrivacyManager, ledger: IOLedger) {
        precondition(!features.isEmpty, "a gated storage needs at least one feature")
        self.inner = inner
        self.features = features
        self.privacy = privacy
        self.ledger = ledger
    }

    /// Whether calls go through right now.
    @inlinable public var isOpen: Bool { privacy.isEnabled(features) }

    /// Checks the gate and counts the outcome. Allocation-free.
    @inlinable
    func admit() throws(GatedIOError) {
        guard privacy.isEnabled(features) else {
            ledger.record(.storage, .refused, for: features)
            throw .gateClosed(features)
        }
        ledger.record(.storage, .allowed, for: features)
    }

    /// Reads the blob `name` from the inner store, if the gate is open.
    @inlinable
    public func read(_ name: String) throws(GatedIOError) -> Data? {
        try admit()
        do { return try inner.read(name) } catch { throw .failed(error) }
    }

    /// Writes `data` as `name` to the inner store, if the gate is open.
    @inlinable
    public func write(_ data: Data, to name: String) throws(GatedIOError) {
        try admit()
        do { try inner.write(data, to: name) } catch { throw .failed(error) }
    }

    /// Removes the blob `name` from the inner store, if the gate is open.
    @inlinable
    @discardableResult
    public func remove(_ name: String) throws(GatedIOError) -> Bool {
        try admit()
        do { return try inner.remove(name) } catch { throw .failed(error) }
    }

    /// Deletes everything in the inner store, whatever the gate says; returns the names deleted.
    ///
    /// Call it on an enabled → disabled edge (from ``Subsystem/purge()``). It is counted as one purge.
    public func purge() throws(GatedIOError) -> [String] {
        ledger.record(.purge, .allowed, for: features)
        do { return try inner.removeAll() } catch { throw .failed(error) }
    }
}
