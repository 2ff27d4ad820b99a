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
///
/// Nothing here waits long for another process that holds the data directory's lock: ``current()`` and ``reset()``
/// wait at most about 100 ms. When the last feature goes off, the file is deleted at once or, while the lock is
/// held, in the background once it is free; until then the identifier it holds is never handed out again
/// (``current()`` stores a new one over it). Start-up waits for nothing: the deletion a killed revoke-all left is
/// finished in the background when the lock is busy.
public final class AnonymousIdentifier: Sendable, CustomStringConvertible {
    /// The most bytes the identifier's file may hold (a UUID takes 36): a larger file is refused, unread.
    public static let maximumFileSize = 256

    private let privacy: PrivacyManager
    /// The file that keeps the identifier, or `nil` when it lives in memory only.
    public let url: URL?
    private let cached: LockedValue<Cached>
    private let observation: LockedValue<ObservationToken?>

    /// The identifier in memory, and whether the file still holds one that was forgotten (its deletion waits for
    /// another process's lock): that one is never read again.
    private struct Cached {
        var identifier: UUID?
        var isFileStale = false
    }

    /// Creates the identifier's home. Reads and writes nothing until ``current()`` is called, except to finish a
    /// revocation: when the gate's store records a revoke-all that a kill interrupted before it deleted the
    /// identifier (`PrivacyManager.pendingRevocation`), the file and the temporary files beside it are deleted
    /// here, unread, and the revocation is told so.
    ///
    /// - Parameters:
    ///   - privacy: The gate that decides whether the identifier may exist.
    ///   - url: The file that keeps it across launches, or `nil` to keep it in memory only.
    public init(privacy: PrivacyManager, url: URL?) {
        self.privacy = privacy
        self.url = url
        self.cached = LockedValue(Cached())
        self.observation = LockedValue(nil)
        let token = privacy.observe { [weak self] change in
            if change.current.isEmpty { self?.forget() }
        }
        observation.withLock { $0 = token }
        if let pending = privacy.pendingRevocation, !pending.isIdentifierDeleted {
            finishRevocation(pending.requestKey, delay: 0.01)
        }
    }

    /// Finishes revoke-all `key`'s deletion of the identifier's file in the background, once the data directory's
    /// lock is free: what revoke-all owes when another process held the lock as it tried. Nobody waits for it. The
    /// pending record, in the store since revoke-all began, still says the identifier is not deleted, so a kill
    /// before this lands leaves it to the next start (``init(privacy:url:)``).
    package func finishRevocationWhenLockFree(_ key: UUID) {
        privacy.whenStoreLockFree(after: 0.01) { [weak self] in
            self?.finishRevocation(key, delay: 0.02, onlyIfStale: true)
        }
    }

    /// Deletes the identifier and the temporary files beside it, and marks that part of the revocation `key` done
    /// when nothing failed. Waits for no lock another process holds: while one does, tries again in the background
    /// once it is free. Other errors are left for revoke-all's report: the step is tried again at the next start.
    /// `onlyIfStale` resets the identifier only when the cache says the file may still hold the revoked one: in this
    /// process revoke-all forgot it, and a new one stored since (a feature enabled again) replaced its file, and is
    /// kept. (A flag, not a closure: each closure literal made the optimizer compile this function once more.)
    private func finishRevocation(_ key: UUID, delay: Double, onlyIfStale: Bool = false) {
        let isBusy = AtomicFile.$lockWait.withValue(.zero) { () -> Bool in
            do {
                let cache = cached.withLock { $0 }
                if !onlyIfStale || cache.isFileStale { try reset() }
            } catch {
                return AtomicFile.isLockBusy(error)
            }
            if let url {
                let failures = AtomicFile.removeTemporaries(in: url.deletingLastPathComponent()).failures
                guard failures.isEmpty else { return failures.contains(where: AtomicFile.isLockBusy) }
            }
            do {
                try privacy.updatePendingRevocation(key: key) { $0.isIdentifierDeleted = true }
            } catch {
                return AtomicFile.isLockBusy(error)
            }
            return false
        }
        guard isBusy else { return }
        privacy.whenStoreLockFree(after: delay) { [weak self] in
            self?.finishRevocation(key, delay: min(delay * 2, 1), onlyIfStale: onlyIfStale)
        }
    }

    /// Forgets the identifier as the last feature goes off, on the thread that delivers the change, waiting for
    /// nothing: while another holder keeps the lock, its file is deleted in the background once it is free (it is
    /// never read again meanwhile).
    private func forget(delay: Double = 0.01) {
        do {
            try AtomicFile.$lockWait.withValue(.zero) { _ = try reset() }
        } catch  where AtomicFile.isLockBusy(error) {
            privacy.whenStoreLockFree(after: delay) { [weak self] in
                guard let self, self.cached.withLock({ $0.isFileStale }) else { return }
                self.forget(delay: min(delay * 2, 1))
            }
        } catch {
            // Reported by the next current() or reset(), which meet the same file.
        }
    }

    /// The identifier, created and stored if needed, or `nil` while no feature is enabled.
    ///
    /// - Throws: When the identifier file exists but cannot be read, or a new one cannot be stored (also when another
    ///   process keeps the data directory's lock for more than about 100 ms).
    public func current() throws -> UUID? {
        guard privacy.isAnyEnabled() else { return nil }
        return try Self.waitingBriefly { try createOrRead() }
    }

    private func createOrRead() throws -> UUID? {
        try cached.withLock { cached in
            if let identifier = cached.identifier { return identifier }
            if !cached.isFileStale, let stored = try readStored() {
                cached.identifier = stored
                return stored
            }
            var fresh = UUID()
            if let url {
                // Under the directory's lock, re-reading: another process sharing the directory may have just
                // created one, and both must use the same identifier (unless the file holds the forgotten one).
                try AtomicFile.update(FileLocation(file: url), limit: Self.maximumFileSize) { [cached] data in
                    if !cached.isFileStale, let data, let theirs = Self.identifier(in: data) {
                        fresh = theirs
                        return nil
                    }
                    return Data(fresh.uuidString.utf8)
                }
                cached.isFileStale = false
                // The last feature may have been disabled while writing; the observer's reset could have run
                // before the write landed, so undo it here rather than leave an identifier on disk.
                guard privacy.isAnyEnabled() else {
                    try AtomicFile.remove(at: url)
                    return nil
                }
            }
            cached.identifier = fresh
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
            if let identifier = cached.identifier { return identifier }
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
    /// link is deleted itself) goes too. When it cannot be deleted, the identifier it holds is forgotten all the
    /// same: ``current()`` stores a new one over it. Waits at most about 100 ms for another process's lock.
    ///
    /// - Returns: Whether a stored or cached identifier was discarded.
    @discardableResult
    public func reset() throws -> Bool {
        try Self.waitingBriefly { try forgetAndDelete() }
    }

    private func forgetAndDelete() throws -> Bool {
        try cached.withLock { cached in
            var discarded = cached.identifier != nil
            cached.identifier = nil
            guard let url else { return discarded }
            cached.isFileStale = true
            if try AtomicFile.remove(FileLocation(file: url)) { discarded = true }
            cached.isFileStale = false
            return discarded
        }
    }

    /// Runs `body` waiting at most about 100 ms for a lock another process holds, unless the caller bound the wait
    /// otherwise (revoke-all does).
    private static func waitingBriefly<Result>(_ body: () throws -> Result) throws -> Result {
        try AtomicFile.$lockWait.withValue(AtomicFile.lockWait ?? AtomicFile.lockWaitBound) { try body() }
    }

    /// `AnonymousIdentifier(<path>)`, never the identifier itself.
    public var description: String {
        "AnonymousIdentifier(\(url.map { UntrustedText.escapedPath($0.path(percentEncoded: false)) } ?? "in memory"))"
    }
}
