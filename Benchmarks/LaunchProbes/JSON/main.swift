// The launch's baseline (report.py, "Launch allocations"): a fresh process that reads one small JSON file with
// Foundation and one value from it. It prints the value, then the allocations its thread made up to reading it
// and those of the whole process (CMallocCounter).
import CMallocCounter
import Foundation

struct Small: Decodable {
    var enabled: Bool
}

let file = URL(filePath: CommandLine.arguments[1])
let small = try JSONDecoder().decode(Small.self, from: Data(contentsOf: file))
let thread = featuregate_probe_thread_allocations()
let process = featuregate_probe_process_allocations()
print(small.enabled, thread, process)
exit(0)
