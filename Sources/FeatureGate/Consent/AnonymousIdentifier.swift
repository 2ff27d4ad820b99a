import Foundation

/// A random identifier for the install that exists only while some feature is enabled.
///
/// The identifier is created on first use, and only while the privacy manager has at least one feature
/// enabled; with everything off, ``current()`` returns `nil` and touches no file. When the last feature is
/// disabled, the stored identifier is deleted, and the next one will be a new random value, unlinkable to the
/// old. ``reset()`` forgets it at once (revoke-all calls it).
///
/// The identifier is a random UUID: it derives from nothing about the device or the person.
///
/// The file is read only if it is a regular file of at most ``maximumFileSize`` bytes, reached without following a
/// symbolic link; anything else there is an error, and ``reset()`` deletes it without reading it.
public final class AnonymousIdentifier: Sendable, CustomStringConvertible {
    /// The most bytes the identifier's file may hold (a UUID takes 36): a larger file is refused, unread.
    public static let maximumFileSize = 256

    private let privacy: PrivacyManager
    /// The file that keeps the identifier, or `nil` when it lives in memory only.
    public let url: URL?
    private let cached: LockedValue<UUID?>
    private let observation: LockedValue<ObservationToken?>

    /// Creates the identifier's home. Reads and writes nothing until ``current()`` is called, except to finish a
    /// revocation: when the gate's store records a revoke-all that a kill interrupted before it deleted the
    /// identifier (``PrivacyManager/pendingRevocation``), the file and the temporary files beside it are deleted
    /// here, unread, and the revocation is told so.
    ///
    /// - Parameters:
    ///   - privacy: The gate that decides whether the identifier may exist.
    ///   - url: The file that keeps it across launches, or `nil` to keep it in memory only.
    public init(privacy: PrivacyManager, url: URL?) {
        self.privacy = privacy
        self.url = url
        self.cached = LockedValue(nil)
        self.observation = LockedValue(nil)
        let token = privacy.observe { [weak self] change in
            if change.current.isEmpty { _ = try? self?.reset() }
        }
        observation.withLock { $0 = token }
        if let pending = privacy.pendingRevocation, !pending.isIdentifierDeleted {
            finishRevocation(pending.requestKey)
        }
    }

    /// Deletes the identifier and the temporary files beside it, and marks that part of the revocation `key` done
    /// when nothing failed. Errors are left for revoke-all's report: the step is tried again at the next start.
    package func finishRevocation(_ key: UUID) {
        guard (try? reset()) != nil else { return }
        if let url, !AtomicFile.removeTemporaries(in: url.deletingLastPathComponent()).failures.isEmpty { return }
        try? privacy.updatePendingRevocation(key: key) { $0.isIdentifierDeleted = true }
    }

    /// The identifier, created and stored if needed, or `nil` while no feature is enabled.
    ///
    /// - Throws: When the identifier file exists but cannot be read, or a new one cannot be stored.
    public func current() throws -> UUID? {
        guard privacy.isAnyEnabled() else { return nil }
        return try cached.withLock { cached in
            if let cached { return cached }
            if let stored = try readStored() {
                cached = stored
                return stored
            }
            var fresh = UUID()
            if let url {
                // Under the directory's lock, re-reading: another process sharing the directory may have just
                // created one, and both must use the same identifier.
                try AtomicFile.update(FileLocation(file: url), limit: Self.maximumFileSize) { data in
                    if let data, let theirs = Self.identifier(in: data) {
                        fresh = theirs
                        return nil
                    }
                    return Data(fresh.uuidString.utf8)
                }
                // The last feature may have been disabled while writing; the observer's reset could have run
                // before the write landed, so undo it here rather than leave an identifier on disk.
                guard privacy.isAnyEnabled() else {
                    try AtomicFile.remove(at: url)
                    return nil
                }
            }
            cached = fresh
            return fresh
        }
    }

    /// The identifier if one exists, cached or stored, without creating one: `nil` when there is none.
    ///
    /// Unlike ``current()`` it answers whatever the gate says and never writes: it reads the file at most. Use it
    /// to name the identifier in an erasure request before revoke-all deletes it.
    ///
    /// - Throws: When the identifier file exists but cannot be read.
    public func stored() throws -> UUID? {
        try cached.withLock { cached in
            if let cached { return cached }
            return try readStored()
        }
    }

    private func readStored() throws -> UUID? {
        guard let url, let data = try AtomicFile.read(at: url, limit: Self.maximumFileSize) else { return nil }
        return Self.identifier(in: data)
    }

    private static func identifier(in data: Data) -> UUID? {
        UUID(uuidString: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Forgets the identifier and deletes its file (if it exists). The next one will be new.
    ///
    /// The file is deleted without being read first, so a file that cannot be read (or is not a file at all: a
    /// link is deleted itself) goes too.
    ///
    /// - Returns: Whether a stored or cached identifier was discarded.
    @discardableResult
    public func reset() throws -> Bool {
        try cached.withLock { cached in
            var discarded = cached != nil
            cached = nil
            if let url, try AtomicFile.remove(FileLocation(file: url)) { discarded = true }
            return discarded
        }
    }

    /// `AnonymousIdentifier(<path>)`, never the identifier itself.
    public var description: String {
        "AnonymousIdentifier(\(url.map { UntrustedText.escapedPath($0.path(percentEncoded: false)) } ?? "in memory"))"
    }
}
