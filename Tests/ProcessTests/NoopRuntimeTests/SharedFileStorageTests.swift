#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import ProcessTestSupport
import Testing

/// `FileStorage` in one directory shared by real processes (`feature-store-writer storage`), each writing whole
/// files and purging the whole storage, while this process reads and purges too.
@Suite struct SharedFileStorageTests {
    /// Every file and directory under `url`, relative.
    func tree(_ url: URL) -> [String] {
        (FileManager.default.enumerator(atPath: url.path(percentEncoded: false))?.allObjects as? [String]) ?? []
    }

    @Test func writesAndPurgesFromSeveralProcessesLeaveOnlyWholeFiles() throws {
        let root = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let storage = FileStorage(directory: root.appending(path: "subsystem"))
        let children = try (0..<2).map { tag in
            let process = Process()
            process.executableURL = try builtProduct("feature-store-writer")
            process.arguments = ["storage", storage.directory.path(percentEncoded: false), String(tag), "500"]
            try process.run()
            return process
        }
        let names = (0..<2).flatMap { tag in (0..<8).map { "t\(tag)/n\($0)" } }
        var reads = 0
        var purges = 0
        var torn: [String] = []
        var failures: [String] = []
        while children.contains(where: \.isRunning) {
            for name in names {
                do {
                    guard let data = try storage.read(name) else { continue }
                    reads += 1
                    if data.count != 4_096 || Set(data).count != 1 { torn.append(name) }
                } catch {
                    failures.append("read \(name): \(error)")
                }
            }
            do {
                _ = try storage.removeAll()
                purges += 1
            } catch FileStorageError.notAllRemoved(_, let busy) where busy.allSatisfy(AtomicFile.isLockBusy) {
                // Gave up after 100 ms behind a child's lock, touching nothing: tried again next time round.
            } catch {
                failures.append("purge: \(error)")
            }
        }
        // A write after another process's purge recreates what it needs: no child failed.
        #expect(children.map(\.terminationStatus) == [0, 0])
        #expect(torn.isEmpty)
        #expect(failures.isEmpty)
        // No temporary file of an interrupted write, nothing but the storage's own names.
        let left = tree(storage.directory)
        #expect(left.allSatisfy { $0 == "t0" || $0 == "t1" || names.contains($0) }, "\(left)")
        #expect(reads + purges > 0)
        _ = try storage.removeAll()
        #expect(!FileManager.default.fileExists(atPath: storage.directory.path(percentEncoded: false)))
        #expect(tree(root).allSatisfy { $0 == PrivacyDataDirectory.lockFileName }, "\(tree(root))")
    }
}
#endif
