// swift-tools-version: 6.2
// FeatureGate declares no package dependencies, and never will: SDKs adopt it precisely because it pulls
// nothing else into their dependency graph. Tools that need packages (the benchmarks) live in their own
// package under Benchmarks/.
import PackageDescription

// The command-line tools the process tests run as child processes: built for those tests where they can run.
let onMacOSAndLinux = TargetDependencyCondition.when(platforms: [.macOS, .linux])

let package = Package(
    name: "FeatureGate",
    platforms: [
        .macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1),
    ],
    products: [
        .library(name: "FeatureGate", targets: ["FeatureGate"]),
        .library(name: "FeatureGateConfig", targets: ["FeatureGateConfig"]),
        .library(name: "NoopRuntime", targets: ["NoopRuntime"]),
        // App Tracking Transparency and AdSupport: an app adds this product only when it tracks.
        .library(name: "FeatureGateTracking", targets: ["FeatureGateTracking"]),
        // Declared Age Range (iOS 26, macOS 26): an app adds this product only when it asks for ages.
        .library(name: "FeatureGateAgeRange", targets: ["FeatureGateAgeRange"]),
        .library(name: "FeatureGateIAB", targets: ["FeatureGateIAB"]),
        .library(name: "FeatureGateRemote", targets: ["FeatureGateRemote"]),
        // The front door: the usual stack (gate, consent, runtime, identifier, revocation) from a config file.
        .library(name: "FeatureGateStack", targets: ["FeatureGateStack"]),
        // Not `featuregate` for the target: on a case-insensitive file system it would clash with FeatureGate.
        .executable(name: "featuregate", targets: ["FeatureGateCLI"]),
    ],
    targets: [
        // C11 atomics for the gate's word and the package's lock-free counters: Synchronization's Atomic needs
        // iOS 18 / macOS 15, above the floors. Header-only `static inline` functions, inlined into Swift callers.
        .target(name: "CFeatureGateAtomics"),
        .target(
            name: "FeatureGate",
            dependencies: ["CFeatureGateAtomics"],
            // Declares UserDefaults (CA92.1), used by UserDefaultsFeatureStore and UserDefaultsReader, and file
            // metadata (C617.1): the file layer fstats the files in its own data directory before reading them.
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        .target(name: "FeatureGateConfig", dependencies: ["FeatureGate"]),
        .target(name: "NoopRuntime", dependencies: ["FeatureGate"]),
        // The system adapter for App Tracking Transparency; empty where the framework does not exist (Linux).
        .target(name: "FeatureGateTracking", dependencies: ["FeatureGate"]),
        // The system adapter for Declared Age Range; empty where the framework does not exist (Linux).
        .target(name: "FeatureGateAgeRange", dependencies: ["FeatureGate"]),
        // Consent-platform signals: IAB TCF v2.2, US Privacy and GPP strings, the CMP's keys, Consent Mode.
        // Declares UserDefaults (CA92.1), used by UserDefaultsCMPKeySource; nothing else.
        .target(
            name: "FeatureGateIAB", dependencies: ["FeatureGate"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        // The server's kill switch: Airship remote-data payloads and the refresher that fetches them.
        .target(name: "FeatureGateRemote", dependencies: ["FeatureGate", "NoopRuntime"]),
        // The front door. Above FeatureGateConfig and NoopRuntime, which stay independent of each other: the only module
        // that sees a config file and the runtime at once, and nothing depends on it.
        .target(name: "FeatureGateStack", dependencies: ["FeatureGate", "FeatureGateConfig", "NoopRuntime"]),
        .testTarget(
            name: "FeatureGateStackTests",
            dependencies: ["FeatureGate", "FeatureGateConfig", "NoopRuntime", "FeatureGateStack", "PackageTestSupport"]
        ),
        .executableTarget(
            name: "consent-demo",
            dependencies: [
                "FeatureGate", "FeatureGateConfig", "FeatureGateIAB", "FeatureGateRemote", "FeatureGateStack",
                "NoopRuntime",
            ],
            path: "Examples/ConsentDemo"
        ),
        // The child processes of the multi-process tests: writers killed mid-save, processes sharing a data directory.
        .executableTarget(
            name: "feature-store-writer",
            dependencies: ["FeatureGate", "FeatureGateRemote", "NoopRuntime", "PackageTestSupport"],
            path: "Tests/Fixtures/FeatureStoreWriter"
        ),
        // What the test targets share, on every platform: the package root, a seeded generator, the loopback HTTP
        // server and a transport to it.
        .target(
            name: "PackageTestSupport", dependencies: ["FeatureGate", "NoopRuntime"], path: "Tests/PackageTestSupport"),
        // What the tests that start child processes share: finding and running the package's executables, the
        // stopped lock holder. `Process` exists on macOS and Linux only: its files compile to nothing elsewhere.
        .target(
            name: "ProcessTestSupport", dependencies: ["FeatureGate", "PackageTestSupport"], path: "Tests/ProcessTestSupport"),
        // The tests are split by what they need. FeatureGateTests, NoopRuntimeTests, FeatureGateConfigTests,
        // FeatureGateIABTests, FeatureGateRemoteTests and FeatureGateStackTests start no child process and run
        // wherever the libraries do (the iOS Simulator too). The <Name>ProcessTests targets (Tests/ProcessTests/<Name>)
        // run the package's executables as child processes (killed writers, stopped lock holders, the command-line
        // tool, the fuzzers' replays): macOS and Linux only, their files compile to nothing elsewhere. They compile
        // the helpers they share with <Name> from Tests/<Name>/Support (symbolic links in their Support folders).
        .testTarget(name: "FeatureGateTests", dependencies: ["FeatureGate", "PackageTestSupport"]),
        .testTarget(
            name: "FeatureGateProcessTests",
            dependencies: [
                "FeatureGate", "PackageTestSupport", "ProcessTestSupport",
                .target(name: "feature-store-writer", condition: onMacOSAndLinux),
            ],
            path: "Tests/ProcessTests/FeatureGateTests"
        ),
        .testTarget(name: "NoopRuntimeTests", dependencies: ["FeatureGate", "NoopRuntime", "PackageTestSupport"]),
        .testTarget(
            name: "NoopRuntimeProcessTests",
            dependencies: [
                "FeatureGate", "NoopRuntime", "PackageTestSupport", "ProcessTestSupport",
                .target(name: "feature-store-writer", condition: onMacOSAndLinux),
            ],
            path: "Tests/ProcessTests/NoopRuntimeTests"
        ),
        // FeatureGateConfig: the `featuregate` tool, and the config reader's fuzz target, which replays files
        // in a plain build and runs libFuzzer when `scripts/fuzz.sh config` builds it with -DFUZZING.
        .executableTarget(
            name: "FeatureGateCLI",
            dependencies: ["FeatureGate", "FeatureGateConfig", "FeatureGateIAB", "FeatureGateRemote"]),
        // What every fuzz target's main.swift does: libFuzzer under -DFUZZING, replaying files otherwise.
        .target(name: "FuzzDriver", path: "Tests/Fuzz/FuzzDriver"),
        // The fuzz targets' shared checks (ConfigFuzz) and the structure-aware generator of config documents.
        .target(
            name: "ConfigFuzzing",
            dependencies: ["FeatureGate", "FeatureGateConfig"],
            path: "Tests/Fuzz/ConfigFuzzing"
        ),
        .executableTarget(
            name: "config-fuzzer",
            dependencies: ["ConfigFuzzing", "FuzzDriver"],
            path: "Tests/Fuzz/ConfigFuzzer",
            exclude: ["Corpus", "config.dict"]
        ),
        // Structure-aware: libFuzzer mutates a recipe that ConfigFuzzing turns into a binary plist, XML or JSON.
        .executableTarget(
            name: "config-structure-fuzzer",
            dependencies: ["ConfigFuzzing", "FuzzDriver"],
            path: "Tests/Fuzz/ConfigStructureFuzzer"
        ),
        .testTarget(
            name: "FeatureGateConfigTests", dependencies: ["FeatureGate", "FeatureGateConfig", "PackageTestSupport"]),
        .testTarget(
            name: "FeatureGateConfigProcessTests",
            dependencies: [
                "FeatureGate", "FeatureGateConfig", "ConfigFuzzing", "PackageTestSupport", "ProcessTestSupport",
                .target(name: "FeatureGateCLI", condition: onMacOSAndLinux),
                .target(name: "config-fuzzer", condition: onMacOSAndLinux),
                .target(name: "config-structure-fuzzer", condition: onMacOSAndLinux),
            ],
            path: "Tests/ProcessTests/FeatureGateConfigTests"
        ),
        // The IAB decoders' fuzz target: replays files in a plain build, runs libFuzzer under `scripts/fuzz.sh tcf`.
        .executableTarget(
            name: "tcf-fuzzer",
            dependencies: ["FeatureGate", "FeatureGateIAB", "FuzzDriver"],
            path: "Tests/Fuzz/TCFFuzzer",
            exclude: ["Corpus", "tcf.dict"]
        ),
        .testTarget(
            name: "FeatureGateIABTests", dependencies: ["FeatureGate", "FeatureGateIAB", "PackageTestSupport"]),
        .testTarget(
            name: "FeatureGateIABProcessTests",
            dependencies: [
                "FeatureGate", "FeatureGateIAB", "PackageTestSupport", "ProcessTestSupport",
                .target(name: "FeatureGateCLI", condition: onMacOSAndLinux),
                .target(name: "tcf-fuzzer", condition: onMacOSAndLinux),
                .target(name: "consent-demo", condition: onMacOSAndLinux),
            ],
            path: "Tests/ProcessTests/FeatureGateIABTests"
        ),
        // The remote-data parser's structure-aware fuzz target: replays recipes in a plain build, runs libFuzzer
        // under `scripts/fuzz.sh remote`. Its generator reads fuzz bytes with ConfigFuzzing's FuzzInput.
        .target(
            name: "RemoteFuzzing",
            dependencies: ["FeatureGate", "FeatureGateRemote", "ConfigFuzzing"],
            path: "Tests/Fuzz/RemoteFuzzing"
        ),
        .executableTarget(
            name: "remote-fuzzer",
            dependencies: ["RemoteFuzzing", "FuzzDriver"],
            path: "Tests/Fuzz/RemoteFuzzer",
            exclude: ["Corpus"]
        ),
        .testTarget(
            name: "FeatureGateRemoteTests",
            dependencies: ["FeatureGate", "FeatureGateRemote", "NoopRuntime", "PackageTestSupport", "RemoteFuzzing"]
        ),
        .testTarget(
            name: "FeatureGateRemoteProcessTests",
            dependencies: [
                "FeatureGate", "FeatureGateRemote", "NoopRuntime", "PackageTestSupport", "ProcessTestSupport",
                "RemoteFuzzing",
                .target(name: "FeatureGateCLI", condition: onMacOSAndLinux),
                .target(name: "remote-fuzzer", condition: onMacOSAndLinux),
                .target(name: "feature-store-writer", condition: onMacOSAndLinux),
            ],
            path: "Tests/ProcessTests/FeatureGateRemoteTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
