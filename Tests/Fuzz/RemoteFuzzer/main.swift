// The remote-data parser's structure-aware fuzz target.
//
// libFuzzer mutates a recipe; RemotePayloadGenerator turns it into an Airship remote-data payload (a response or a
// bare app config, with rules, Ivy constraints and predicates, valid or nearly so); RemoteFuzz checks the parser's
// invariants on it, and on the raw bytes as a payload too. Built by `scripts/fuzz.sh remote` with -DFUZZING. In a
// plain build it replays recipe files, or writes the payload of one recipe:
//
//   remote-fuzzer RECIPE...
//   remote-fuzzer --write-document RECIPE FILE
import Foundation
import FuzzDriver
import RemoteFuzzing

let name = "remote-fuzzer"
let arguments = Array(CommandLine.arguments.dropFirst())
FuzzDriver.writeDocumentIfAsked(name, arguments: arguments) { RemotePayloadGenerator.document(from: $0) }
FuzzDriver.run(name, arguments: arguments) { recipe in
    RemoteFuzz.run(Data(RemotePayloadGenerator.document(from: recipe)))
    RemoteFuzz.run(recipe, versionPairs: 1)
}
