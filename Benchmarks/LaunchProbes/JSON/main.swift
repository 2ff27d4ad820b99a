// The launch's baseline (report.py, "Launch allocations"): a fresh process that reads one small JSON file with
// Foundation and one value from it.
import Foundation

struct Small: Decodable {
    var enabled: Bool
}

let file = URL(filePath: CommandLine.arguments[1])
let small = try JSONDecoder().decode(Small.self, from: Data(contentsOf: file))
print(small.enabled)
exit(0)
