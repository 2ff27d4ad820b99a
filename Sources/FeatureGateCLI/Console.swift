import FeatureGate
import Foundation

/// Where the tool writes: standard output for results, standard error for everything about the run.
///
/// A line may hold text from a file the tool read (a key, a value, a path): ``out(_:)`` and ``err(_:)`` escape every
/// control character in it (see `UntrustedText`), so a crafted file can neither clear a terminal nor forge a line of
/// a CI log. Only the tool's own help, which is multi-line, goes out as it is (``help(_:)``, ``helpToError(_:)``).
struct Console {
    /// Writes a line to standard output, control characters escaped.
    mutating func out(_ line: String) {
        write(Data((UntrustedText.escaped(line, limit: .max) + "\n").utf8), to: FileHandle.standardOutput)
    }

    /// Writes one JSON value on one line to standard output: how every command prints its `--json` output.
    mutating func out(_ value: JSONOutput) {
        out(value.text)
    }

    /// Writes the tool's own multi-line text (help, overviews) to standard output, unescaped.
    mutating func help(_ text: String) {
        write(Data((text + "\n").utf8), to: FileHandle.standardOutput)
    }

    /// Writes the tool's own multi-line text to standard error, unescaped.
    mutating func helpToError(_ text: String) {
        write(Data((text + "\n").utf8), to: FileHandle.standardError)
    }

    /// Writes raw bytes to standard output.
    mutating func outBytes(_ data: Data) {
        write(data, to: FileHandle.standardOutput)
    }

    /// Writes a line to standard error, control characters escaped.
    mutating func err(_ line: String) {
        write(Data((UntrustedText.escaped(line, limit: .max) + "\n").utf8), to: FileHandle.standardError)
    }

    /// Whether standard output is a terminal (binary output is refused there).
    var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    private func write(_ data: Data, to handle: FileHandle) {
        // A failed write (a full disk) has nowhere to be reported. A closed pipe ends the process with SIGPIPE,
        // as it does for any Unix tool.
        try? handle.write(contentsOf: data)
    }
}
