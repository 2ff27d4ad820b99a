import FeatureGate
import FeatureGateConfig
import Foundation
import NoopRuntime

/// The usual FeatureGate stack in one call: the gate, the consent manager with its file ledger, the subsystem
/// runtime, the anonymous identifier and revoke-all, all kept in one data directory.
///
/// ```swift
/// let stack = try PrivacyStack(configFile: configURL, dataDirectory: dataDirectory)
/// stack.register(analytics)          // your subsystems, before start
/// await stack.start(erasure: erasure) // follows the gate; finishes a revoke-all a killed process began
/// try await stack.consent.setStatus(.granted, for: .analytics, source: .user)
/// let report = await stack.revokeAll(erasure: erasure)
/// ```
///
/// Files, under `dataDirectory` (see `PrivacyDataDirectory`): `featuregate-state.json` (the gate's state),
/// `consent-ledger.jsonl` and its checkpoint (the consent audit trail), `anonymous-id`, and each subsystem's folder
/// when you use ``storage(_:for:)``. Nothing is created or written while every feature is off: creating the stack
/// reads the state and the ledger, and writes nothing, except when the configuration's `resetEnabledFeatures` is
/// true and the stored state holds decisions to discard: then it rewrites `featuregate-state.json` once (keeping the
/// user's refusals, revoke-all's included).
///
/// Each piece is a property, so code that needs more (a remote kill switch, a CMP, App Tracking Transparency) uses
/// it directly; wiring the pieces yourself remains possible, and this type only does what the README's "Use it"
/// section would otherwise do by hand.
///
/// Thread safety: every member may be used from any thread or task.
public final class PrivacyStack: Sendable {
    /// The gate: check features with `privacy.isEnabled(_:)`, change them with `enableFeatures(_:)` and
    /// `disableFeatures(_:)`, follow them with `observe(_:)` or `updates`.
    public let privacy: PrivacyManager
    /// Consent: categories granted and refused (recorded in `consent-ledger.jsonl`), which enable and withhold the
    /// features the policy maps.
    public let consent: ConsentManager
    /// Starts, stops and purges the subsystems ``register(_:)`` added as features change.
    public let runtime: SubsystemRuntime
    /// The install's anonymous identifier, deleted by revoke-all.
    public let identifier: AnonymousIdentifier
    /// Revoke-all, and the finishing of one a killed process began.
    public let revocation: ConsentRevocation
    /// The names of the stack's files in its data directory.
    public let files: PrivacyDataDirectory
    /// What every gated wrapper the stack made allowed and refused.
    public let counter = IOCounter()
    /// The config file's warnings (a retired name, a key Airship reads that FeatureGate does not), if it was read
    /// from a file; empty otherwise.
    public let configurationWarnings: [ConfigDiagnostic]

    /// Reads the config file (strict by default: an unknown name is an error, never "everything on") and builds
    /// the stack in `dataDirectory`, with the consent policy the file holds or `ConsentPolicy.default`.
    ///
    /// - Parameters:
    ///   - configFile: An `AirshipConfig.plist`-style file: XML, binary or old-style plist, or JSON.
    ///   - dataDirectory: Where the stack keeps its files; created on the first write.
    ///   - reader: How to read the file; `ConfigReader()` (strict, built-in flags) by default.
    /// - Throws: `ConfigError`, which names the file, the key path, what was found and what was expected.
    public convenience init(
        configFile: URL, dataDirectory: URL, reader: ConfigReader = ConfigReader()
    ) throws(ConfigError) {
        let result = try reader.read(contentsOf: configFile)
        self.init(
            configuration: result.configuration, consentPolicy: result.consentPolicy, catalog: reader.catalog,
            dataDirectory: dataDirectory, warnings: result.warnings)
    }

    /// Builds the stack from a configuration written in code.
    ///
    /// - Parameters:
    ///   - configuration: The features enabled when nothing was stored (`[]` for default-off consent).
    ///   - consentPolicy: The categories and the features they map; `ConsentPolicy.default` when `nil`.
    ///   - catalog: The flags, with your own in bits 16–31.
    ///   - dataDirectory: Where the stack keeps its files; created on the first write.
    public convenience init(
        configuration: PrivacyConfiguration, consentPolicy: ConsentPolicy? = nil, catalog: FeatureCatalog = .builtIn,
        dataDirectory: URL
    ) {
        self.init(
            configuration: configuration, consentPolicy: consentPolicy, catalog: catalog, dataDirectory: dataDirectory,
            warnings: [])
    }

    private init(
        configuration: PrivacyConfiguration, consentPolicy: ConsentPolicy?, catalog: FeatureCatalog,
        dataDirectory: URL, warnings: [ConfigDiagnostic]
    ) {
        files = PrivacyDataDirectory(url: dataDirectory)
        privacy = PrivacyManager(
            configuration: configuration, store: FileFeatureStore(url: files.stateFile), catalog: catalog,
            consentPolicy: consentPolicy ?? .default)
        consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile))
        runtime = SubsystemRuntime(privacy: privacy)
        identifier = AnonymousIdentifier(privacy: privacy, url: files.anonymousIdentifierFile)
        revocation = ConsentRevocation(consent: consent, runtime: runtime, identifier: identifier)
        configurationWarnings = warnings
    }

    // MARK: - Gated parts

    /// A storage in the folder `folder` of the data directory, open while `features` are all enabled.
    public func storage(_ folder: String, for features: Feature) -> GatedStorage {
        GatedStorage(
            FileStorage(directory: files.url.appending(path: folder, directoryHint: .isDirectory)),
            features: features, privacy: privacy, counter: counter)
    }

    /// `transport`, open while `features` are all enabled.
    public func transport(_ transport: any Transport, for features: Feature) -> GatedTransport {
        GatedTransport(transport, features: features, privacy: privacy, counter: counter)
    }

    /// An event buffer open while `features` are all enabled, delivering to `backends` on each flush.
    ///
    /// It is wired to the stack's ``identifier`` and ``consent``: every batch names the anonymous identifier that
    /// ``revokeAll(source:erasure:)``'s erasure request names (`EventBatch.anonymousId`, created on the first flush
    /// that has something to send), each event keeps the consent decisions in force when it was tracked, and each
    /// consent change made while the buffer is open is queued in order with the events (see `UploadBackend` for the
    /// wire format).
    public func eventBuffer<Event: Sendable>(
        of _: Event.Type = Event.self, for features: Feature, capacity: Int = 1_000,
        backends: [any EventBackend<Event>]
    ) -> GatedEventBuffer<Event> {
        GatedEventBuffer(
            features: features, capacity: capacity, privacy: privacy, backends: backends, counter: counter,
            consent: consent, identifier: identifier)
    }

    // MARK: - Lifetime

    /// Adds `subsystem`, which the runtime starts, stops and purges as its features change. Register every
    /// subsystem before ``start(erasure:)``.
    public func register(_ subsystem: any Subsystem) {
        runtime.register(subsystem)
    }

    /// Starts following the gate and finishes a revoke-all a killed process began, if there is one.
    ///
    /// The runtime purges every subsystem before starting any when a revoke-all is pending; this call then records
    /// what the consent ledger lacks and sends the erasure request still owed, through `erasure`.
    ///
    /// - Parameter erasure: The erasure request a pending revoke-all may still owe; `nil` to send none now.
    /// - Returns: The report of the revoke-all it finished, or `nil` when none was pending.
    @discardableResult
    public func start(erasure: ErasureRequest? = nil) async -> RevocationReport? {
        runtime.start()
        return await revocation.finishPendingRevocation(erasure: erasure)
    }

    /// Waits until every subsystem has finished the starts, stops and purges that the changes made so far call for.
    ///
    /// A change to the gate or to consent applies to ``privacy`` at once; the runtime starts, stops and purges
    /// subsystems after it, in order. Await this before checking what a subsystem did, e.g. that a disable purged.
    public func settle() async {
        await runtime.settle()
    }

    /// "Delete my data": denies every category, disables every feature, waits until every subsystem has stopped
    /// and purged, deletes the anonymous identifier and, if given, sends `erasure` once.
    ///
    /// - Returns: The receipt: what was recorded, stopped, purged, reset and sent, and what failed.
    public func revokeAll(source: ConsentSource = .user, erasure: ErasureRequest? = nil) async -> RevocationReport {
        await revocation.revokeAll(source: source, erasure: erasure)
    }
}
