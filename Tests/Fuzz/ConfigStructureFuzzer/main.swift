// The config reader's structure-aware fuzz target.
//
// libFuzzer mutates a recipe; ConfigDocumentGenerator turns the recipe into a binary plist, XML plist, old-style
// plist or JSON config full of hostile numbers, escapes and comments, shared and cyclic references and bad offset
// tables; ConfigFuzz checks the reader's invariants on it. Built by `scripts/fuzz-config.sh --structured` with
// -DFUZZING. In a plain build it replays recipe files, or writes the document of one recipe so a crasher can join
// the corpus:
//
//   config-structure-fuzzer RECIPE...
//   config-structure-fuzzer --write-document RECIPE FILE
import ConfigFuzzing
import Foundation
import FuzzDriver

let name = "config-structure-fuzzer"
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--write-document" {
    guard arguments.count == 3 else { FuzzDriver.fail(name, "usage: \(name) --write-document RECIPE FILE") }
    guard let recipe = FileManager.default.contents(atPath: arguments[1]) else {
        FuzzDriver.fail(name, "cannot read \(arguments[1])")
    }
    do {
        try Data(ConfigDocumentGenerator.document(from: recipe)).write(to: URL(filePath: arguments[2]))
    } catch {
        FuzzDriver.fail(name, "cannot write \(arguments[2]): \(error)")
    }
    exit(0)
}
// Every input, fuzzed or replayed, is a recipe: the document made from it is what the reader sees.
FuzzDriver.run(name, arguments: arguments) { recipe in
    ConfigFuzz.run(Data(ConfigDocumentGenerator.document(from: recipe)))
}
