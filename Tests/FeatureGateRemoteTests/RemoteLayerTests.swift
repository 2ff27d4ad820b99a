import FeatureGate
import FeatureGateRemote
import Foundation
import PackageTestSupport
import Testing

/// The remote layer kept by the gate: start-up, persistence across launches, lifting, failures.
@Suite struct RemoteLayerTests {
    @Test func theKeptPayloadHoldsFromTheFirstCheckOfTheNextLaunch() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let first = directory.launch()
        try first.applyRemotePayload(Payloads.pushFor10, entityTag: "\"v1\"")
        #expect(!first.isEnabled(.push))
        #expect(directory.files == [PrivacyDataDirectory.lockFileName, PrivacyDataDirectory.remoteLayerFileName])

        let relaunched = directory.launch()
        #expect(!relaunched.isEnabled(.push))
        #expect(relaunched.isEnabled(.analytics))
        #expect(relaunched.remoteDisabledFeatures == .push)
        #expect(relaunched.keptRemoteLayer?.entityTag == "\"v1\"")
        let reason = relaunched.reason(for: .push)
        #expect(reason.isRemotelyDisabled && reason.isLocallyEnabled)
        #expect(reason.remoteRule == "disable_features[0] (from payloads[0] app_config:ios)")
        #expect(reason.description.contains("remote kill switch: disable_features[0]"))
        #expect(relaunched.startupDiagnostics.isEmpty)
    }

    @Test func anAppUpdateThatNoLongerMatchesLiftsTheRuleAtStartUp() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        try directory.launch().applyRemotePayload(Payloads.pushFor10)
        #expect(directory.launch(appVersion: "1.1.0").isEnabled(.push))
        #expect(!directory.launch(appVersion: "1.0.9").isEnabled(.push))
    }

    @Test func liftingRestoresExactlyTheLocalDecisions() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [.push, .analytics, .contacts])
        gate.disableFeatures(.contacts)
        gate.enableFeatures(.messageCenter)
        let before = gate.enabledFeatures
        let stateBytes = try Data(contentsOf: directory.data.stateFile)

        try gate.applyRemotePayload(Payloads.disabling("all"))
        #expect(gate.enabledFeatures == [])
        #expect(gate.isAnyFeatureEnabled(ignoringRemoteConfig: true))
        try gate.applyRemotePayload(Payloads.nothing)
        #expect(gate.enabledFeatures == before)
        #expect(try Data(contentsOf: directory.data.stateFile) == stateBytes)
        #expect(gate.reason(for: .contacts).source == .app)

        // And across a relaunch.
        try gate.applyRemotePayload(Payloads.disabling("push"))
        let relaunched = directory.launch(enabled: [.push, .analytics, .contacts])
        #expect(relaunched.enabledFeatures == before.subtracting(.push))
        try relaunched.applyRemotePayload(Payloads.nothing)
        #expect(relaunched.enabledFeatures == before)
    }

    @Test func anInvalidPayloadChangesNothingOnDiskOrInMemory() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch()
        try gate.applyRemotePayload(Payloads.disabling("push"))
        let kept = try Data(contentsOf: directory.data.remoteLayerFile)
        for bad in [Payloads.invalid, Data("{".utf8), Data(count: RemoteLayerFile.maximumSize + 1)] {
            #expect(throws: RemoteLayerUpdateError.self) { try gate.applyRemotePayload(bad) }
        }
        #expect(gate.remoteDisabledFeatures == .push)
        #expect(try Data(contentsOf: directory.data.remoteLayerFile) == kept)
        #expect(directory.launch().remoteDisabledFeatures == .push)
    }

    @Test func aFullyDisabledGateKeepsAndWritesNothing() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [])
        do {
            try gate.applyRemotePayload(Payloads.disabling("push"))
            Issue.record("a disabled gate kept a payload")
        } catch {
            guard case .nothingEnabled = error else { throw error }
        }
        #expect(directory.files.isEmpty)
        #expect(gate.remoteDisabledFeatures == [])
    }

    @Test func anUnreadableKeptLayerDisablesEverythingUntilAValidPayloadArrives() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data("not a record".utf8).write(to: directory.data.remoteLayerFile)
        let log = DiagnosticLog()
        let gate = directory.launch(diagnostics: log)
        #expect(gate.enabledFeatures == [])
        #expect(gate.reason(for: .push).remoteRule == "kept remote layer unreadable")
        #expect(gate.startupDiagnostics.count == 1)
        #expect(log.all.count == 1)
        // The refresher still fetches (something is enabled locally), and the server can lift it.
        #expect(gate.isAnyFeatureEnabled(ignoringRemoteConfig: true))
        try gate.applyRemotePayload(Payloads.nothing)
        #expect(gate.enabledFeatures == .all)
        #expect(directory.launch().enabledFeatures == .all)
    }

    @Test func aKeptPayloadTheInterpreterNowRefusesFailsClosed() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        try directory.launch().applyRemotePayload(Payloads.pushFor10)
        // A record whose payload no longer reads (tampered with) disables everything.
        let text = try String(contentsOf: directory.data.remoteLayerFile, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "17.+", with: "17.x").utf8).write(to: directory.data.remoteLayerFile)
        #expect(directory.launch().enabledFeatures == [])
    }

    @Test func aFailedSaveAppliesUntilExitAndIsReported() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let log = DiagnosticLog()
        let gate = directory.launch(diagnostics: log)
        // The layer's "file" is a directory: the rename over it fails.
        try FileManager.default.createDirectory(at: directory.data.remoteLayerFile, withIntermediateDirectories: true)
        try gate.applyRemotePayload(Payloads.disabling("analytics"))
        #expect(!gate.isEnabled(.analytics))
        #expect(log.all.contains { if case .remoteLayerSaveFailed = $0 { true } else { false } })
    }

    @Test func theSamePayloadAgainWritesNothing() throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch()
        try gate.applyRemotePayload(Payloads.disabling("push"), entityTag: "a")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.data.remoteLayerFile.path())
        let inode = attributes[.systemFileNumber] as? Int
        try gate.applyRemotePayload(Payloads.disabling("push"), entityTag: "a")
        let after = try FileManager.default.attributesOfItem(atPath: directory.data.remoteLayerFile.path())
        #expect(after[.systemFileNumber] as? Int == inode)
    }

    @Test func aManagerWithoutARemoteLayerRefusesPayloads() {
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all), store: InMemoryFeatureStore())
        #expect(throws: RemoteLayerUpdateError.self) { try gate.applyRemotePayload(Payloads.nothing) }
    }

    /// Seeded random sequences of local changes, payloads (valid and not) and relaunches: after every step the
    /// effective set is the local set minus what the last valid payload kept disables, and the local set never
    /// moves because of a payload.
    @Test func modelRandomSequencesOfDecisionsPayloadsAndRelaunches() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let payloads: [(Data, Feature?)] = [
            (Payloads.disabling("push"), .push), (Payloads.disabling("all"), .all), (Payloads.nothing, []),
            (Payloads.disabling("analytics", "contacts"), [.analytics, .contacts]), (Payloads.pushFor10, .push),
            (Payloads.invalid, nil), (Data("[]".utf8), nil),
        ]
        let flags = FeatureCatalog.builtIn.allFeatures.flags
        for _ in 0..<12 {
            let directory = RemoteTestDirectory()
            defer { directory.cleanUp() }
            var gate = directory.launch(enabled: [.push, .analytics])
            var local: Feature = [.push, .analytics]
            var kept: Feature = []
            for step in 0..<30 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    let flag = flags.randomElement(using: &random)!
                    if Bool.random(using: &random) {
                        gate.enableFeatures(flag)
                        local.insert(flag)
                    } else {
                        gate.disableFeatures(flag)
                        local.remove(flag)
                    }
                case 1, 2:
                    let (payload, disables) = payloads.randomElement(using: &random)!
                    let result = Result { () throws(RemoteLayerUpdateError) in try gate.applyRemotePayload(payload) }
                    if let disables, !local.isEmpty {
                        #expect(throws: Never.self) { try result.get() }
                        kept = disables
                    } else {
                        #expect(throws: RemoteLayerUpdateError.self) { try result.get() }
                    }
                default:
                    gate = directory.launch(enabled: [.push, .analytics])
                }
                #expect(
                    gate.enabledFeatures == local.subtracting(kept),
                    "seed \(seed), step \(step): effective \(gate.enabledFeatures), local \(local), kept \(kept)")
            }
        }
    }

    /// Payloads applied from many tasks while others toggle local flags: the file ends up holding exactly the
    /// payload the gate applied last, and the effective set is the local set minus what it disables.
    @Test func concurrentPayloadsAndDecisionsLeaveTheFileAndTheGateAgreeing() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [.push, .analytics, .contacts])
        let payloads = [
            Payloads.disabling("push"), Payloads.disabling("analytics"), Payloads.nothing, Payloads.invalid,
        ]
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<150 {
                        if task.isMultiple(of: 2) {
                            _ = try? gate.applyRemotePayload(payloads[(task + index) % payloads.count])
                        } else if index.isMultiple(of: 2) {
                            gate.disableFeatures(.messageCenter)
                        } else {
                            gate.enableFeatures(.messageCenter)
                        }
                    }
                }
            }
        }
        let kept = try #require(gate.keptRemoteLayer)
        let relaunched = directory.launch(enabled: [.push, .analytics, .contacts])
        #expect(relaunched.keptRemoteLayer == kept)
        #expect(relaunched.remoteDisabledFeatures == gate.remoteDisabledFeatures)
        #expect(
            gate.enabledFeatures
                == gate.reasons().filter(\.isLocallyEnabled).reduce(into: Feature()) {
                    $0.formUnion($1.feature)
                }.subtracting(gate.remoteDisabledFeatures))
    }
}
