// The config reader's structure-aware fuzz target.
//
// libFuzzer mutates a recipe; ConfigDocumentGenerator turns the recipe into a binary plist, XML plist, old-style
// plist or JSON config full of hostile numbers, escapes and comments, shared and cyclic references and bad offset
// tables; ConfigFuzz checks the reader's invariants on it. Built by `scripts/fuzz.sh config --structured` with
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
FuzzDriver.writeDocumentIfAsked(name, arguments: arguments) { ConfigDocumentGenerator.document(from: $0) }
// Every input, fuzzed or replayed, is a recipe: the document made from it is what the reader sees.
FuzzDriver.run(name, arguments: arguments) { recipe in
    ConfigFuzz.run(Data(ConfigDocumentGenerator.document(from: recipe)))
}
