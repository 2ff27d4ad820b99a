import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tool writes: standard output for results, standard error for everything about the run.
struct Console {
    /// Writes a line to standard output.
    mutating func out(_ line: String) {
        write(Data((line + "\n").utf8), to: FileHandle.standardOutput)
    }

    /// Writes raw bytes to standard output.
    mutating func outBytes(_ data: Data) {
        write(data, to: FileHandle.standardOutput)
    }

    /// Writes a line to standard error.
    mutating func err(_ line: String) {
        write(Data((line + "\n").utf8), to: FileHandle.standardError)
    }

    /// Whether standard output is a terminal (binary output is refused there).
    var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    private func write(_ data: Data, to handle: FileHandle) {
        // A failed write (a full disk) has nowhere to be reported. A closed pipe ends the process with SIGPIPE,
        // as it does for any Unix tool.
        try? handle.write(contentsOf: data)
    }
}
