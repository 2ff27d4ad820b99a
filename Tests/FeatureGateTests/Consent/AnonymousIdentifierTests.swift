import FeatureGate
import Foundation
import Testing

@Suite struct AnonymousIdentifierTests {
    @Test func noIdentifierAndNoFileWhileEverythingIsDisabled() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let identifier = AnonymousIdentifier(privacy: manager([]), url: directory.url.appending(path: "id"))
        #expect(try identifier.current() == nil)
        #expect(try identifier.reset() == false)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func theIdentifierIsStableAcrossInstancesWhileEnabled() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "id")
        let privacy = manager(.analytics)
        let first = try #require(try AnonymousIdentifier(privacy: privacy, url: url).current())
        #expect(try AnonymousIdentifier(privacy: privacy, url: url).current() == first)
        #expect(try String(contentsOf: url, encoding: .utf8) == first.uuidString)
    }

    @Test func disablingTheLastFeatureDeletesItAndTheNextOneIsNew() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "id")
        let privacy = manager([.analytics, .push])
        let identifier = AnonymousIdentifier(privacy: privacy, url: url)
        let first = try #require(try identifier.current())
        privacy.disableFeatures(.push)
        #expect(try identifier.current() == first)
        privacy.disableFeatures(.analytics)
        #expect(!FileManager.default.fileExists(atPath: url.path(percentEncoded: false)))
        #expect(try identifier.current() == nil)
        privacy.enableFeatures(.push)
        let second = try #require(try identifier.current())
        #expect(second != first)
    }

    @Test func resetForgetsItAtOnce() throws {
        let privacy = manager(.analytics)
        let identifier = AnonymousIdentifier(privacy: privacy, url: nil)
        let first = try identifier.current()
        #expect(try identifier.reset())
        #expect(try identifier.current() != first)
    }
}

@Suite struct AnonymousIdentifierStoredTests {
    @Test func storedNeverCreatesAnIdentifier() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let identifier = AnonymousIdentifier(privacy: manager(.analytics), url: directory.url.appending(path: "id"))
        #expect(try identifier.stored() == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        let current = try identifier.current()
        #expect(try identifier.stored() == current)
    }

    @Test func storedReadsALeftoverFileWhileEverythingIsOffWithoutWriting() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "id")
        let leftover = UUID()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data(leftover.uuidString.utf8).write(to: url)
        let identifier = AnonymousIdentifier(privacy: manager([]), url: url)
        #expect(try identifier.current() == nil)
        #expect(try identifier.stored() == leftover)
        #expect(try identifier.reset())
        #expect(try identifier.stored() == nil)
    }
}
