import Foundation

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

        init(version: Int, answer: AgeRangeAnswer) {
            self.version = version
            self.answer = answer
        }

        // Written out with the shared ``JSONKey``, as a synthesized conformance would.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: JSONKey.self)
            version = try container.decode(Int.self, forKey: "version")
            answer = try container.decode(AgeRangeAnswer.self, forKey: "answer")
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(version, forKey: "version")
            try container.encode(answer, forKey: "answer")
        }
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
