import Foundation

/// A random identifier for the install that exists only while some feature is enabled.
///
/// The identifier is created on first use, and only while the privacy manager has at least one feature
/// enabled; with everything off, ``current()`` returns `nil` and touches no file. When the last feature is
/// disabled, the stored identifier is deleted, and the next one will be a new random value, unlinkable to the
/// old. ``reset()`` forgets it at once (revoke-all calls it).
///
/// The identifier is a random UUID: it derives from nothing about the device or the person.
public final class AnonymousIdentifier: Sendable {
    private let privacy: PrivacyManager
    private let url: URL?
    private let cached: LockedValue<UUID?>
    private let observation: LockedValue<ObservationToken?>

    /// Creates the identifier's home. Reads and writes nothing until ``current()`` is called.
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
    }

    /// The identifier, created and stored if needed, or `nil` while no feature is enabled.
    ///
    /// - Throws: When the identifier file exists but cannot be read, or a new one cannot be stored.
    public func current() throws -> UUID? {
        guard privacy.isAnyFeatureEnabled() else { return nil }
        return try cached.withLock { cached in
            if let cached { return cached }
            if let url, let data = try AtomicFile.read(at: url),
                let stored = UUID(
                    uuidString: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            {
                cached = stored
                return stored
            }
            let fresh = UUID()
            if let url {
                try AtomicFile.write(Data(fresh.uuidString.utf8), to: url)
                // The last feature may have been disabled while writing; the observer's reset could have run
                // before the write landed, so undo it here rather than leave an identifier on disk.
                guard privacy.isAnyFeatureEnabled() else {
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
            guard let url, let data = try AtomicFile.read(at: url) else { return nil }
            return UUID(
                uuidString: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Forgets the identifier and deletes its file (if it exists). The next one will be new.
    ///
    /// - Returns: Whether a stored or cached identifier was discarded.
    @discardableResult
    public func reset() throws -> Bool {
        try cached.withLock { cached in
            var discarded = cached != nil
            cached = nil
            if let url, try AtomicFile.read(at: url) != nil {
                try AtomicFile.remove(at: url)
                discarded = true
            }
            return discarded
        }
    }
}
