#if os(macOS) || os(Linux)
import Foundation

/// A child process (`feature-store-writer hold`) that holds a data directory's inter-process lock and is stopped
/// with SIGSTOP: a debugger, a suspended process, a slow disk. The tests of callers that must not wait on another
/// process keep it stopped until their checks are done.
public final class StoppedLockHolder {
    /// The holder.
    public let process: Process
    private var isReleased = false

    /// Starts the holder on `directory` (created if needed), waits until it holds the lock, and stops it;
    /// `leavingTemporary` also leaves a temporary file of an interrupted write there.
    public init(directory: URL, leavingTemporary: Bool = false) throws {
        let output = Pipe()
        process = try startFeatureStoreWriter(
            ["hold", directory.path(percentEncoded: false), leavingTemporary ? "1" : "0"], output: output)
        let line = output.fileHandleForReading.readData(ofLength: 7)
        guard String(decoding: line, as: UTF8.self) == "saving\n" else {
            process.terminate()
            throw CocoaError(.executableLoad)
        }
        kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets the holder run again and kills it: the lock is free.
    public func release() {
        guard !isReleased else { return }
        isReleased = true
        kill(process.processIdentifier, SIGCONT)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { release() }
}
#endif
