// The config reader's structure-aware fuzz target.
//
// libFuzzer mutates a recipe; ConfigDocumentGenerator turns the recipe into a binary plist, XML plist or JSON
// config full of hostile numbers, shared and cyclic references and bad offset tables; ConfigFuzz checks the
// reader's invariants on it. Built by `scripts/fuzz-config.sh --structured` with -DFUZZING. In a plain build it
// replays recipe files, or writes the document of one recipe so a crasher can join the corpus:
//
//   config-structure-fuzzer RECIPE...
//   config-structure-fuzzer --write-document RECIPE FILE
import ConfigFuzzing
import Foundation

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
        let recipe =
            bytes.map { UnsafeBufferPointer(start: $0, count: count) } ?? UnsafeBufferPointer(start: nil, count: 0)
        ConfigFuzz.run(Data(ConfigDocumentGenerator.document(from: recipe)))
        return 0
    })
#else
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("config-structure-fuzzer: \(message)\n".utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--write-document" {
    guard arguments.count == 3 else { fail("usage: config-structure-fuzzer --write-document RECIPE FILE") }
    guard let recipe = FileManager.default.contents(atPath: arguments[1]) else { fail("cannot read \(arguments[1])") }
    do {
        try Data(ConfigDocumentGenerator.document(from: recipe)).write(to: URL(filePath: arguments[2]))
    } catch {
        fail("cannot write \(arguments[2]): \(error)")
    }
    exit(0)
}
var replayed = 0
for argument in arguments {
    guard let recipe = FileManager.default.contents(atPath: argument) else { fail("cannot read \(argument)") }
    ConfigFuzz.run(Data(ConfigDocumentGenerator.document(from: recipe)))
    replayed += 1
}
print("config-structure-fuzzer: replayed \(replayed) recipes; every invariant held")
#endif
