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
        .executableTarget(
            name: "FeatureGateBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FeatureGate", package: "FeatureGate"),
                .product(name: "FeatureGateConfig", package: "FeatureGate"),
                .product(name: "FeatureGateIAB", package: "FeatureGate"),
                .product(name: "NoopRuntime", package: "FeatureGate"),
            ],
            path: "Benchmarks/FeatureGateBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
