#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Revoke-all in a real child process (`feature-store-writer revoke`), killed with SIGKILL at every kill point in
/// turn (after each write of the gate state, each ledger append, each subsystem's purge, and at each step of
/// revoke-all), then the next launch in another child (`feature-store-writer relaunch`): what it must do.
@Suite struct RevocationKillTests {
    /// One child's output, one fact per line: `WORD REST`.
    struct Output {
        let lines: [String]
        let killed: Bool

        subscript(_ word: String) -> String? {
            lines.first { $0.hasPrefix(word + " ") }.map { String($0.dropFirst(word.count + 1)) }
        }
    }

    /// Runs `feature-store-writer` with `arguments` to its end. Its output goes to a file, read after it exited: a
    /// pipe read to its end would wait for every process that inherited the pipe, and a child of another test
    /// started at the same moment can keep it for as long as that test keeps it stopped.
    static func run(_ arguments: [String], in directory: URL) throws -> Output {
        let run = try runBuiltExecutable("feature-store-writer", arguments, in: directory, timeLimit: 60)
        #expect(!run.timedOut, "feature-store-writer \(arguments) still ran after 60 s: a hang")
        return Output(lines: run.output.split(separator: "\n").map(String.init), killed: run.wasSignalled)
    }

    /// What a relaunch after revoke-all began must show, whatever point the kill hit.
    static func checkFinished(
        _ relaunch: Output, key: String, identifier: String, server: [String], point: Int
    ) {
        let retained = Set(PrivacyDataDirectory.retainedFileNames)
        #expect(relaunch["first-check"] == "revoked", "kill point \(point)")
        #expect(relaunch["identifier-after-init"] == "gone", "kill point \(point)")
        // Nothing started; every subsystem purged (or purged already before the kill).
        let events = relaunch["events"]?.split(separator: ",") ?? []
        #expect(!events.contains { $0.hasPrefix("start") }, "kill point \(point): \(events)")
        let afterStart = Set((relaunch["files-after-start"] ?? "").split(separator: ",").map(String.init))
        #expect(afterStart.isSubset(of: retained), "kill point \(point): \(afterStart.subtracting(retained))")
        #expect(relaunch["granted"] == "", "kill point \(point)")
        #expect(relaunch["pending-after"] == "none", "kill point \(point)")
        let afterFinish = Set((relaunch["files-after-finish"] ?? "").split(separator: ",").map(String.init))
        #expect(afterFinish.isSubset(of: retained), "kill point \(point)")
        // Sent at least once, every time with the same key and the identifier revoke-all found.
        #expect(!server.isEmpty, "kill point \(point): the erasure request was never sent")
        #expect(server.allSatisfy { $0 == "\(key) \(identifier)" }, "kill point \(point): \(server)")
    }

    @Test func aRevocationKilledAtAnyPointIsFinishedByTheNextLaunch() throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-revoke-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var points: Int?
        var point = 0
        var covered = 0
        // Point 0 never kills: it counts the points; then each point in turn.
        while point <= (points ?? 0) {
            let root = directory.appending(path: "point-\(point)")
            let data = PrivacyDataDirectory(url: root.appending(path: "data"))
            let server = root.appending(path: "server.log")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: server.path(percentEncoded: false), contents: nil))

            let child = try Self.run(
                ["revoke", data.url.path(percentEncoded: false), server.path(), String(point)], in: root)
            let identifier = try #require(child["identifier"], "kill point \(point): \(child.lines)")
            if point == 0 {
                #expect(!child.killed)
                let counted = try #require(child["points"].flatMap(Int.init))
                points = counted
            } else {
                #expect(child.killed, "kill point \(point) was not reached: \(child.lines)")
            }
            let stored = FileManager.default.contents(atPath: data.stateFile.path(percentEncoded: false))
            let pending = try stored.flatMap { try FeatureStateRecord(decoding: $0).pendingRevocation }
            let sentBefore = try String(contentsOf: server, encoding: .utf8).split(separator: "\n").map(String.init)

            let relaunch = try Self.run(["relaunch", data.url.path(percentEncoded: false), server.path()], in: root)
            let sent = try String(contentsOf: server, encoding: .utf8).split(separator: "\n").map(String.init)
            if let pending {
                #expect(relaunch["pending"] == pending.requestKey.uuidString, "kill point \(point)")
                Self.checkFinished(
                    relaunch, key: pending.requestKey.uuidString, identifier: identifier, server: sent, point: point)
                covered += 1
            } else if sentBefore.isEmpty {
                // Killed before revoke-all recorded that it began: nothing of it happened, nothing is pending.
                #expect(child.lines.contains { $0 == "killed at step beginning" }, "kill point \(point)")
                #expect(relaunch["first-check"] == "enabled", "kill point \(point)")
                #expect(relaunch["finished"] == "nothing-pending", "kill point \(point)")
                #expect(sent.isEmpty)
            } else {
                // Finished before the kill: sent once, and the next launch has nothing left to do.
                #expect(relaunch["first-check"] == "revoked", "kill point \(point)")
                #expect(relaunch["finished"] == "nothing-pending", "kill point \(point)")
                #expect(sent.count == 1 && sent.allSatisfy { $0.hasSuffix(" \(identifier)") }, "\(sent)")
                let files = Set((relaunch["files-after-start"] ?? "").split(separator: ",").map(String.init))
                #expect(files.isSubset(of: Set(PrivacyDataDirectory.retainedFileNames)), "kill point \(point)")
            }
            point += 1
        }
        // Every point but three left a revocation to finish: the first (before it recorded itself) and the last two
        // (after it removed its record).
        #expect(covered == (points ?? 0) - 3, "only \(covered) of \(points ?? 0) kill points left one to finish")
    }
}
#endif
