// The IAB signal decoders' fuzz target.
//
// Built by `scripts/fuzz.sh tcf` with -DFUZZING and -sanitize=fuzzer,address, it hands control to libFuzzer.
// In a plain build it replays the files and directories given as arguments (a crash reproducer, say) through
// the same checks, so `swift build` and `swift test` need no fuzzer flags.
import FuzzDriver

FuzzDriver.run("tcf-fuzzer") { TCFFuzz.run($0) }
