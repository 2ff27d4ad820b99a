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
/// read once at registration; the binary plist and JSON forms are written from it by Foundation, so all six
/// benchmarks read the same content. Every benchmark checks its result once, outside the measured loop.
func registerConfigBenchmarks() {
    let xml = ConfigSample.airshipConfigXML()
    let samples: [(format: String, bytes: Data)] = [
        ("xml", xml), ("binary", ConfigSample.convert(xml, to: .binary)),
        ("json", ConfigSample.convert(xml, to: .json)),
    ]
    let reader = ConfigReader()
    let expected: Feature = [.push, .inAppAutomation, .messageCenter]

    for (format, bytes) in samples {
        Benchmark("Config.load.\(format)", configuration: .reported(calls: .one)) { benchmark in
            var last: ConfigReadResult?
            for _ in benchmark.scaledIterations {
                last = try? reader.read(bytes, sourceName: "AirshipConfig.\(format)")
            }
            benchmark.stopMeasurement()
            if last?.configuration.enabledFeatures != expected {
                benchmark.error("expected the reader to enable \(expected), got \(String(describing: last))")
            }
        }

        let decode: (Data) throws -> PlainConfig =
            format == "json"
            ? { try JSONDecoder().decode(PlainConfig.self, from: $0) }
            : { try PropertyListDecoder().decode(PlainConfig.self, from: $0) }
        Benchmark("Config.decode.\(format)", configuration: .reported(calls: .one)) { benchmark in
            var last: PlainConfig?
            for _ in benchmark.scaledIterations {
                last = try? decode(bytes)
            }
            benchmark.stopMeasurement()
            if last?.enabledFeatures != ["push", "in_app_automation", "message_center"] {
                benchmark.error("expected the bare decode to find three names, got \(String(describing: last))")
            }
        }
    }
}

/// What the bare decode decodes into: the two keys, no validation.
private struct PlainConfig: Codable {
    var enabledFeatures: [String]
    var resetEnabledFeatures: Bool
}

/// The sample config's bytes in each format.
private enum ConfigSample {
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
