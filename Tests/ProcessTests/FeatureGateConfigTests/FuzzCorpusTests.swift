#if os(macOS) || os(Linux)
import ConfigFuzzing
import FeatureGateConfig
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The fuzz targets' invariants hold on the committed corpus in a plain build, so a broken seed, a crasher that
/// came back or a broken harness shows up in `swift test`, not only when someone fuzzes.
@Suite struct FuzzCorpusTests {
    private let corpus = packageRoot.appending(path: "Tests/Fuzz/ConfigFuzzer/Corpus")

    @Test func theCorpusReplaysThroughTheFuzzTargetCleanly() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path(percentEncoded: false))
        #expect(files.count >= 25)
        // The crashers found so far: NaN dates in binary plists.
        #expect(files.filter { $0.hasPrefix("crash-") }.count >= 5)
        let run = try runBuiltExecutable("config-fuzzer", [corpus.path(percentEncoded: false)], in: packageRoot)
        #expect(run.status == 0)
        #expect(run.lines == ["config-fuzzer: replayed \(files.count) inputs; every invariant held"])
    }

    @Test func aMissingInputIsAnError() throws {
        let run = try runBuiltExecutable("config-fuzzer", ["/no/such/input"], in: packageRoot)
        #expect(run.status == 2)
        #expect(run.errorLines == ["config-fuzzer: no such file: /no/such/input"])
    }

    @Test func featuregateCheckEndsInZeroOrOneWithDiagnosticLinesOnEveryCorpusFile() throws {
        for file in try FileManager.default.contentsOfDirectory(atPath: corpus.path(percentEncoded: false)).sorted() {
            let path = corpus.appending(path: file).path(percentEncoded: false)
            let run = try featuregate(["check", path], in: packageRoot)
            #expect([0, 1].contains(run.status), "\(file): exit \(run.status)")
            #expect(run.errorOutput == "", "\(file)")
            #expect(
                run.lines.allSatisfy {
                    $0.hasPrefix("\(path): error: ") || $0.hasPrefix("\(path): warning: ") || $0 == "\(path): OK"
                },
                "\(file): \(run.lines)")
            #expect((run.status == 1) == run.lines.contains { $0.hasPrefix("\(path): error: ") }, "\(file)")
        }
    }

    @Test func featuregateCheckEndsInZeroOrOneOnGeneratedDocumentsAndRandomBytes() throws {
        let seed = UInt64.random(in: 0 ... .max)
        var generator = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        var paths: [String] = []
        for index in 0..<300 {
            let recipe = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let bytes = index % 5 == 4 ? recipe : ConfigDocumentGenerator.document(from: recipe)
            paths.append(directory.file("input-\(index)", Data(bytes)).path(percentEncoded: false))
        }
        let run = try featuregate(["check", "--json"] + paths, in: directory)
        #expect([0, 1].contains(run.status), "seed \(seed)")
        #expect(run.errorOutput == "", "seed \(seed)")
        #expect(run.lines.count == paths.count, "seed \(seed)")
        for (line, path) in zip(run.lines, paths) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["file"] as? String == path, "seed \(seed)")
        }
    }

    @Test func wellFormedGeneratedBinaryPlistsAreNeverReadAsCorrupt() {
        let seed = UInt64.random(in: 0 ... .max)
        var generator = SeededGenerator(seed: seed)
        var valid = 0
        for _ in 0..<1_000 {
            let recipe = (0..<Int.random(in: 0...400, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            var input = FuzzInput(recipe)
            let bytes = BinaryPlistGenerator.generate(&input, allowCorruption: false)
            let result = outcome(bytes, .lenient)
            #expect(result.format == .binary, "seed \(seed)")
            #expect(!result.lines.contains { $0.contains("corrupt") || $0.contains("truncated") }, "seed \(seed)")
            if result.isValid { valid += 1 }
        }
        // Enough of them get past the parser into the validator and out as a configuration.
        #expect(valid >= 50, "seed \(seed): \(valid) valid")
    }

    @Test func generatedDocumentsHoldEveryInvariantInProcess() {
        let seed = UInt64.random(in: 0 ... .max)
        var generator = SeededGenerator(seed: seed)
        var formats: [ConfigFormat?: Int] = [:]
        // A broken invariant stops the whole process with its message, before any expectation could report the
        // seed: so the seed is printed first, to replay the run.
        print("generatedDocumentsHoldEveryInvariantInProcess: seed \(seed)")
        for _ in 0..<2_000 {
            let recipe = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let document = ConfigDocumentGenerator.document(from: recipe)
            formats[ConfigFormat.detect(in: document), default: 0] += 1
            ConfigFuzz.run(Data(document))
        }
        #expect(formats[.binary, default: 0] > 800, "seed \(seed): \(formats)")
        for format in [ConfigFormat.xml, .json, .openStep] {
            #expect(formats[format, default: 0] > 200, "seed \(seed): \(formats)")
        }
    }

    @Test func theStructureFuzzerWritesTheDocumentOfARecipeForTheCorpus() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let recipe: [UInt8] = [0, 1, 4, 0x33, 0x10, 7, 200, 3, 3, 3, 9, 250, 17, 0, 42]
        let recipeFile = directory.file("recipe", Data(recipe)).path(percentEncoded: false)
        let output = directory.url.appending(path: "document").path(percentEncoded: false)
        let write = try runBuiltExecutable(
            "config-structure-fuzzer", ["--write-document", recipeFile, output], in: directory.url)
        #expect(write.status == 0)
        #expect(FileManager.default.contents(atPath: output) == Data(ConfigDocumentGenerator.document(from: recipe)))
        let replay = try runBuiltExecutable("config-structure-fuzzer", [recipeFile, recipeFile], in: directory.url)
        #expect(replay.lines == ["config-structure-fuzzer: replayed 2 inputs; every invariant held"])
    }
}
#endif
