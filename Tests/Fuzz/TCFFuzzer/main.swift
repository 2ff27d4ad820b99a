// The IAB signal decoders' fuzz target.
//
// Built by scripts/fuzz-tcf.sh with -DFUZZING and -sanitize=fuzzer,address, it hands control to libFuzzer.
// In a plain build it replays the files and directories given as arguments (a crash reproducer, say) through
// the same checks, so `swift build` and `swift test` need no fuzzer flags.
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
        TCFFuzz.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
        return 0
    })
#else
var replayed = 0
for argument in CommandLine.arguments.dropFirst() {
    let url = URL(filePath: argument)
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
        FileHandle.standardError.write(Data("tcf-fuzzer: no such file: \(argument)\n".utf8))
        exit(2)
    }
    let files =
        isDirectory.boolValue
        ? (try FileManager.default.contentsOfDirectory(atPath: argument)).sorted().map { url.appending(path: $0) }
        : [url]
    for file in files {
        TCFFuzz.run(try Data(contentsOf: file))
        replayed += 1
    }
}
print("tcf-fuzzer: replayed \(replayed) inputs; every invariant held")
#endif
