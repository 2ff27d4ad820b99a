import Benchmark
import FeatureGate
import FeatureGateConfig
import Foundation

/// Benchmark 6: loading a typical config with `ConfigReader.read(_:sourceName:)`, as XML plist, binary plist and
/// JSON, each beside a bare Foundation decode (`PropertyListDecoder` or `JSONDecoder`) of the same bytes into a plain
/// `Codable` struct with the two keys the reader reads. The reader does more than the bare decode: it detects the
/// format, validates UTF-8, keeps lines for diagnostics, checks names against the catalog and reports ignored keys.
///
/// The config is `Examples/Configs/AirshipConfig.plist`, a whole Airship config (fourteen keys, three feature names),
/// read once at registration; the binary plist and JSON forms are written from it by Foundation, so every format
/// holds the same content.
///
/// Load and decode are measured in paired samples (``PairedSample``), one benchmark per format: each sample times one
/// load and one decode back to back (order alternating), and the ratio is taken per sample. Timed in separate benchmarks, the same
/// decode read anywhere from 5.6 to 10.7 µs from one run to the next on this shared machine, which swung the JSON
/// ratio from 0.7 to 1.8; paired, such swings fall on both sides of the ratio alike. The harness's malloc count covers
/// the pair. Each side's result is checked once, after the measured region.
func registerConfigBenchmarks() {
    let xml = ConfigSample.airshipConfigXML()
    let samples: [(format: String, bytes: Data)] = [
        ("xml", xml), ("binary", ConfigSample.convert(xml, to: .binary)),
        ("json", ConfigSample.convert(xml, to: .json)),
    ]
    let reader = ConfigReader()
    let expected: Feature = [.push, .inAppAutomation, .messageCenter]

    for (format, bytes) in samples {
        let sourceName = "AirshipConfig.\(format)"
        let decode: (Data) throws -> PlainConfig =
            format == "json"
            ? { try JSONDecoder().decode(PlainConfig.self, from: $0) }
            : { try PropertyListDecoder().decode(PlainConfig.self, from: $0) }

        let pair = PairedSample(first: "load", second: "decode")
        Benchmark(
            "Config.load-vs-decode.\(format)",
            configuration: .reported(calls: .one, extraMetrics: pair.metrics)
        ) { benchmark in
            var loaded: ConfigReadResult?
            var decoded: PlainConfig?
            pair.measure(
                in: benchmark,
                { loaded = try? reader.read(bytes, sourceName: sourceName) },
                { decoded = try? decode(bytes) }
            )
            if loaded?.configuration.enabledFeatures != expected {
                benchmark.error("expected the reader to enable \(expected), got \(String(describing: loaded))")
            }
            if decoded?.enabledFeatures != ["push", "in_app_automation", "message_center"] {
                benchmark.error("expected the bare decode to find three names, got \(String(describing: decoded))")
            }
        }
    }
}

/// What the bare decode decodes into: the two keys, no validation.
struct PlainConfig: Codable {
    var enabledFeatures: [String]
    var resetEnabledFeatures: Bool
}

/// The sample config's bytes in each format.
enum ConfigSample {
    enum Format {
        case binary, json
    }

    /// `Examples/Configs/AirshipConfig.plist`, found from this source file's path (the benchmarks run where they were
    /// built).
    static func airshipConfigXML() -> Data {
        let root = URL(filePath: #filePath)
            .deletingLastPathComponent()  // FeatureGateBenchmarks
            .deletingLastPathComponent()  // Benchmarks (targets)
            .deletingLastPathComponent()  // Benchmarks (package)
            .deletingLastPathComponent()  // the repository
        let url = root.appending(path: "Examples/Configs/AirshipConfig.plist")
        guard let data = try? Data(contentsOf: url) else {
            fatalError("cannot read the sample config at \(url.path(percentEncoded: false))")
        }
        return data
    }

    /// The same content as a binary plist or as pretty-printed JSON.
    static func convert(_ xml: Data, to format: Format) -> Data {
        do {
            let object = try PropertyListSerialization.propertyList(from: xml, format: nil)
            switch format {
            case .binary:
                return try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
            case .json:
                return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            }
        } catch {
            fatalError("cannot convert the sample config to \(format): \(error)")
        }
    }
}
