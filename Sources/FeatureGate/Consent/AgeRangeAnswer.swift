import Foundation

/// A user's answer to an age request: the age range they (or a parent) declared, or a refusal to share it.
///
/// Bounds are whole years, as Apple's Declared Age Range framework returns them: `lowerBound` `nil` means "no lower
/// bound" (0), `upperBound` `nil` means "no upper bound". The `FeatureGateAgeRange` product turns an
/// `AgeRangeService` response into this; anything else (a server, a sign-up form) can build one too.
public enum AgeRangeAnswer: Sendable, Hashable, Codable {
    /// The user shared an age range.
    case range(lowerBound: Int?, upperBound: Int?)
    /// The user declined to share one.
    case declined
}

/// When a declared age range makes the user a child: under ``childUnderAge`` (13 by default), and what a refusal
/// to share counts as (a child, by default).
///
/// Fail closed: a range that reaches below the age (it straddles it, or has no lower bound) counts as a child, and so
/// does a range that makes no sense (a lower bound above the upper one, a negative bound). A config file's
/// `consentPolicy` sets it with `childUnderAge` and `declinedAgeRange` (FeatureGateConfig).
public struct ChildAgeRule: Sendable, Hashable {
    /// The age under which a user is a child (COPPA's 13 by default; 16 under GDPR article 8 in some countries).
    public var childUnderAge: Int
    /// Whether a user who declines to share an age range counts as a child (`true` by default).
    public var declinedIsChild: Bool

    /// Creates a rule; an age below 1 is read as 1.
    public init(childUnderAge: Int = 13, declinedIsChild: Bool = true) {
        self.childUnderAge = max(childUnderAge, 1)
        self.declinedIsChild = declinedIsChild
    }

    /// Whether `answer` marks the user as a child.
    public func isChild(_ answer: AgeRangeAnswer) -> Bool {
        switch answer {
        case .declined:
            return declinedIsChild
        case .range(let lower, let upper):
            let lower = lower ?? 0
            if lower < 0 || (upper.map { $0 < lower || $0 < 0 } ?? false) { return true }
            // Only a range wholly at or above the age is not a child: one that straddles it might be.
            return lower < childUnderAge
        }
    }
}

/// Where the last declared age range is kept, so the child mark holds across launches until the next answer.
///
/// Implementations must be safe to call from any thread. ``AgeSignalSource`` writes only when an answer arrives.
public protocol AgeRangeAnswerStore: Sendable {
    /// The last answer saved, or `nil` when none was.
    func load() throws(AgeRangeAnswerStoreError) -> AgeRangeAnswer?
    /// Saves `answer`, replacing the previous one.
    func save(_ answer: AgeRangeAnswer) throws(AgeRangeAnswerStoreError)
}

/// Why a declared age range could not be read or written.
public struct AgeRangeAnswerStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file, or a description of the store.
    public var path: String
    /// What went wrong: the file error, or what was found instead of an answer.
    public var message: String

    /// Creates an error.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `PATH: message`.
    public var description: String { "\(path): \(message)" }
}

/// A ``AgeRangeAnswerStore`` in memory: for tests, and for apps that ask every launch.
public final class InMemoryAgeRangeAnswerStore: AgeRangeAnswerStore {
    private let value: LockedValue<AgeRangeAnswer?>

    /// Creates a store holding `answer`.
    public init(_ answer: AgeRangeAnswer? = nil) {
        value = LockedValue(answer)
    }

    /// The answer held.
    public func load() -> AgeRangeAnswer? { value.withLock { $0 } }

    /// Replaces the answer held.
    public func save(_ answer: AgeRangeAnswer) { value.withLock { $0 = answer } }
}

/// A ``AgeRangeAnswerStore`` in one small JSON file (`{"version":1,"answer":{...}}`), written atomically, readable and
/// writable by its owner only. Nothing is created until the first answer is saved.
public struct FileAgeRangeAnswerStore: AgeRangeAnswerStore {
    /// `featuregate-age.json`: the default file name in a ``PrivacyDataDirectory``.
    public static let fileName = "featuregate-age.json"

    /// The file.
    public let url: URL

    /// A store at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// A store in `directory`, under ``fileName``.
    public init(directory: PrivacyDataDirectory) {
        self.init(url: directory.url.appending(path: Self.fileName, directoryHint: .notDirectory))
    }

    private struct Contents: Codable {
        var version: Int
        var answer: AgeRangeAnswer
    }

    /// The saved answer, or `nil` when the file does not exist.
    ///
    /// - Throws: ``AgeRangeAnswerStoreError`` when the file cannot be read or does not hold an answer of version 1.
    public func load() throws(AgeRangeAnswerStoreError) -> AgeRangeAnswer? {
        let path = url.path(percentEncoded: false)
        let data: Data?
        do {
            data = try AtomicFile.read(at: url, limit: 4096)
        } catch {
            throw AgeRangeAnswerStoreError(path: path, message: "cannot read (\(error.reason))")
        }
        guard let data else { return nil }
        guard let contents = try? JSONDecoder().decode(Contents.self, from: data), contents.version == 1 else {
            throw AgeRangeAnswerStoreError(
                path: path, message: "found \(data.count) bytes that are not a declared age range of version 1")
        }
        return contents.answer
    }

    /// Replaces the file with `answer`, waiting at most about 100 ms for another process that holds the data
    /// directory's lock (past that it throws, and nothing is written).
    public func save(_ answer: AgeRangeAnswer) throws(AgeRangeAnswerStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            let data = try encoder.encode(Contents(version: 1, answer: answer))
            try AtomicFile.$lockWait.withValue(AtomicFile.lockWait ?? AtomicFile.lockWaitBound) {
                try AtomicFile.write(data, to: url)
            }
        } catch let error as FileStoreError {
            throw AgeRangeAnswerStoreError(
                path: url.path(percentEncoded: false), message: "cannot write (\(error.reason))")
        } catch {
            throw AgeRangeAnswerStoreError(path: url.path(percentEncoded: false), message: "cannot encode (\(error))")
        }
    }
}

/// Turns declared age ranges into the consent manager's child mark (``ConsentManager/setChild(_:)``) under the
/// policy's ``ConsentPolicy/childAge`` rule, and keeps the last answer so the mark holds across launches until the
/// next answer.
///
/// At launch call ``restore()`` (it applies the kept answer, and writes nothing); when an answer arrives (from
/// `FeatureGateAgeRange`'s `AgeRangeService` adapter, or anywhere else) call ``apply(_:)``. Marking a child takes
/// effect before the answer is written (a take-away never waits for the disk); unmarking one waits for it, so a
/// failed write leaves the user marked.
public actor AgeSignalSource {
    /// The consent manager whose child mark this sets.
    public nonisolated let consentManager: ConsentManager
    private let store: any AgeRangeAnswerStore
    /// The calls, one at a time: each waits for the last one started, so answers are kept and applied in the order
    /// they came, and the kept answer and the mark never disagree (an actor alone would interleave two calls at their
    /// `await`s).
    private var calls = SerialCalls()

    /// Creates a source; nothing is read until ``restore()``.
    public init(consentManager: ConsentManager, store: any AgeRangeAnswerStore) {
        self.consentManager = consentManager
        self.store = store
    }

    /// Applies the kept answer, if any, and returns it. Writes nothing.
    ///
    /// - Throws: ``AgeRangeAnswerStoreError`` when the kept answer cannot be read; the user is then marked a child
    ///   (fail closed) until the next answer.
    @discardableResult
    public func restore() async throws(AgeRangeAnswerStoreError) -> AgeRangeAnswer? {
        try await serially { source in
            let answer: AgeRangeAnswer?
            do throws(AgeRangeAnswerStoreError) {
                answer = try source.store.load()
            } catch {
                await source.consentManager.setChild(true)
                return .failure(error)
            }
            if let answer {
                await source.consentManager.setChild(source.consentManager.policy.childAge.isChild(answer))
            }
            return .success(answer)
        }.get()
    }

    /// Applies a new answer: sets the child mark it implies and keeps the answer. Calls apply in the order made.
    ///
    /// - Returns: Whether the answer marks the user as a child.
    /// - Throws: ``AgeRangeAnswerStoreError`` when the answer could not be kept; a child mark is applied anyway, an
    ///   unmarking is not.
    @discardableResult
    public func apply(_ answer: AgeRangeAnswer) async throws(AgeRangeAnswerStoreError) -> Bool {
        try await serially { source in
            let isChild = source.consentManager.policy.childAge.isChild(answer)
            // A take-away does not wait for the disk; giving back waits until the answer is kept.
            if isChild { await source.consentManager.setChild(true) }
            do throws(AgeRangeAnswerStoreError) {
                try source.store.save(answer)
            } catch {
                return .failure(error)
            }
            if !isChild { await source.consentManager.setChild(false) }
            return .success(isChild)
        }.get()
    }

    private func serially<Value: Sendable>(
        _ body: @escaping @Sendable (isolated AgeSignalSource) async -> Result<Value, AgeRangeAnswerStoreError>
    ) async -> Result<Value, AgeRangeAnswerStoreError> {
        await calls.enqueue(on: self, body).value
    }
}
