// swift-tools-version: 6.1
// The benchmark harness and its dependencies live here, in a package of their own, so that the root package keeps
// zero dependencies. The benchmarks use FeatureGate exactly as an SDK would: as another module.
import PackageDescription

let package = Package(
    name: "FeatureGateBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, because a path dependency is otherwise identified by its folder name, which differs per clone.
        .package(name: "FeatureGate", path: ".."),
        // MallocInterposer counts every malloc in the measured region; the zero-allocation budgets rest on it.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Counts the process's flushes (`fsync`, `fdatasync`) by defining them in the benchmark executable.
        .target(name: "CFlushCounter", path: "Sources/CFlushCounter"),
        .executableTarget(
            name: "FeatureGateBenchmarks",
            dependencies: [
                "CFlushCounter",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FeatureGate", package: "FeatureGate"),
                .product(name: "FeatureGateConfig", package: "FeatureGate"),
                .product(name: "FeatureGateIAB", package: "FeatureGate"),
                .product(name: "NoopRuntime", package: "FeatureGate"),
            ],
            path: "Benchmarks/FeatureGateBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ] + sizeProbes + launchProbes,
    swiftLanguageModes: [.v6]
)

// Binary size per module (report.py): one tiny program per product, calling one `isEnabled`, and one that links
// nothing of FeatureGate. A module's stripped size is the difference between the probe that links it and the probe
// that links only what it depends on.
var sizeProbes: [Target] {
    let probes: [(name: String, products: [String])] = [
        ("None", []),
        ("FeatureGate", ["FeatureGate"]),
        ("FeatureGateConfig", ["FeatureGate", "FeatureGateConfig"]),
        ("NoopRuntime", ["FeatureGate", "NoopRuntime"]),
        ("FeatureGateIAB", ["FeatureGate", "FeatureGateIAB"]),
        ("FeatureGateRemote", ["FeatureGate", "NoopRuntime", "FeatureGateRemote"]),
        ("FeatureGateStack", ["FeatureGate", "FeatureGateConfig", "NoopRuntime", "FeatureGateStack"]),
    ]
    return probes.map { probe in
        .executableTarget(
            name: "size-probe-\(probe.name)",
            dependencies: probe.products.map { .product(name: $0, package: "FeatureGate") },
            path: "SizeProbes/\(probe.name)"
        )
    }
}

// Launch allocations (report.py): a fresh process to its first `isEnabled` with the gate and the consent manager,
// and its baseline, a fresh process that reads one small JSON file with Foundation; each counts its own allocations
// (CMallocCounter) and prints them.
var launchProbes: [Target] {
    [
        .target(name: "CMallocCounter", path: "Sources/CMallocCounter"),
        .executableTarget(
            name: "launch-probe",
            dependencies: ["CMallocCounter", .product(name: "FeatureGate", package: "FeatureGate")],
            path: "LaunchProbes/Launch"),
        .executableTarget(name: "launch-probe-json", dependencies: ["CMallocCounter"], path: "LaunchProbes/JSON"),
    ]
}
