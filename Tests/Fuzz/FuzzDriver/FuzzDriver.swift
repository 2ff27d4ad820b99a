import Foundation

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif

/// What every fuzz target's `main.swift` does, once: hand each input to a check.
///
/// Built with `-DFUZZING` and `-sanitize=fuzzer,address` (the `scripts/fuzz-*.sh` scripts), ``run(_:check:)`` hands
/// control to libFuzzer, which calls `check` with every input it generates. In a plain build it replays the files,
/// and the files in the directories, named on the command line (a corpus, a crash reproducer) through the same
/// `check`, so `swift build` and `swift test` need no fuzzer flags.
public enum FuzzDriver {
    /// The check libFuzzer's C callback calls; set once, before libFuzzer starts.
    nonisolated(unsafe) private static var check: (Data) -> Void = { _ in }

    /// Runs the fuzz target `name` (used in messages) and exits: 0 when every input passed `check`, 2 when a
    /// replayed file cannot be read. A broken invariant traps inside `check`.
    ///
    /// - Parameter arguments: What to replay in a plain build; the command line's arguments when `nil`. (Optional,
    ///   so that a fuzzing build allocates nothing here that `exit` would leave for LeakSanitizer to report.)
    public static func run(_ name: String, arguments: [String]? = nil, check: @escaping (Data) -> Void) -> Never {
        #if FUZZING
        Self.check = check
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(
            LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
                FuzzDriver.check(bytes.map { Data(bytes: $0, count: count) } ?? Data())
                return 0
            })
        #else
        var replayed = 0
        for argument in arguments ?? Array(CommandLine.arguments.dropFirst()) {
            let url = URL(filePath: argument)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                fail(name, "no such file: \(argument)")
            }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).sorted().map {
                    url.appending(path: $0)
                }
                : [url]
            for file in files {
                guard let data = try? Data(contentsOf: file) else { fail(name, "cannot read \(file.path())") }
                check(data)
                replayed += 1
            }
        }
        print("\(name): replayed \(replayed) inputs; every invariant held")
        exit(0)
        #endif
    }

    /// For a structure-aware target: with the arguments `--write-document RECIPE FILE`, writes the document
    /// `document` makes from the recipe in RECIPE to FILE and exits (0, or 2 when a file cannot be read or written),
    /// so a person can look at what a corpus entry or a crash reproducer stands for. Returns for any other arguments.
    public static func writeDocumentIfAsked(_ name: String, arguments: [String], document: (Data) -> [UInt8]) {
        guard arguments.first == "--write-document" else { return }
        guard arguments.count == 3 else { fail(name, "usage: \(name) --write-document RECIPE FILE") }
        guard let recipe = FileManager.default.contents(atPath: arguments[1]) else {
            fail(name, "cannot read \(arguments[1])")
        }
        do {
            try Data(document(recipe)).write(to: URL(filePath: arguments[2]))
        } catch {
            fail(name, "cannot write \(arguments[2]): \(error)")
        }
        exit(0)
    }

    /// Prints `message` to standard error as `name: message` and exits with status 2.
    public static func fail(_ name: String, _ message: String) -> Never {
        FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
        exit(2)
    }
}
