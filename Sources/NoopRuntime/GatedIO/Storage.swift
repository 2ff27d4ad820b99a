import Foundation

/// The role of an SDK's local store: named blobs, read and replaced whole.
///
/// Implement it over your real file store (``FileStorage`` is one), then hand it to ``GatedStorage`` so that
/// no call reaches it while the feature is off. Names are relative paths such as `"analytics/queue.jsonl"`.
///
/// Implementations must be safe to call from any thread.
public protocol Storage: Sendable {
    /// Returns the blob named `name`, or `nil` when there is none. Creates nothing.
    func read(_ name: String) throws -> Data?

    /// Replaces the blob named `name` with `data`, creating whatever backs it if needed.
    func write(_ data: Data, to name: String) throws

    /// Deletes the blob named `name`. Returns whether there was one; deleting nothing touches nothing.
    @discardableResult
    func remove(_ name: String) throws -> Bool

    /// Deletes every blob and whatever was created to hold them; returns the names of the blobs deleted.
    ///
    /// This is what a purge calls. When there is nothing to delete it must delete (and create) nothing.
    func removeAll() throws -> [String]
}

/// A storage that keeps nothing: reads find nothing, writes and removes are dropped. It never does I/O.
///
/// Use it in place of a real store while a subsystem's feature is off, so the subsystem can keep calling its
/// store without a check at every call.
public struct NoopStorage: Storage {
    /// Creates the stand-in.
    public init() {}

    /// Returns `nil`.
    @inlinable public func read(_ name: String) throws -> Data? { nil }

    /// Drops `data`.
    @inlinable public func write(_ data: Data, to name: String) throws {}

    /// Returns `false`.
    @inlinable @discardableResult public func remove(_ name: String) throws -> Bool { false }

    /// Returns no names.
    @inlinable public func removeAll() throws -> [String] { [] }
}
