import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

@Suite struct ConfigWriterTests {
    @Test(arguments: ConfigFormat.allCases)
    func everyConfigurationReadsBackUnchangedAndWithoutWarnings(format: ConfigFormat) throws {
        let reader = ConfigReader(catalog: customCatalog)
        for bits in 0..<(1 << customCatalog.entries.count) {
            let features = customCatalog.entries.enumerated()
                .filter { bits & (1 << $0.offset) != 0 }
                .reduce(into: Feature()) { $0.formUnion($1.element.feature) }
            for reset in [false, true] {
                let configuration = PrivacyConfiguration(enabledFeatures: features, resetEnabledFeatures: reset)
                let data = ConfigWriter.data(for: configuration, as: format, catalog: customCatalog)
                let result = try reader.read(data)
                #expect(result.configuration == configuration)
                #expect(result.format == format)
                #expect(result.warnings.map(\.kind) == (reset ? [.resetDiscardsChoices] : []))
            }
        }
    }

    @Test func jsonIsWrittenWithSortedNames() {
        let data = ConfigWriter.data(
            for: PrivacyConfiguration(enabledFeatures: [.push, .analytics, .inAppAutomation]), as: .json)
        #expect(
            String(decoding: data, as: UTF8.self) == """
                {
                  "enabledFeatures": [
                    "analytics",
                    "in_app_automation",
                    "push"
                  ],
                  "resetEnabledFeatures": false
                }

                """)
        let empty = ConfigWriter.data(for: PrivacyConfiguration(enabledFeatures: []), as: .json)
        #expect(
            String(decoding: empty, as: UTF8.self)
                == "{\n  \"enabledFeatures\": [],\n  \"resetEnabledFeatures\": false\n}\n")
    }

    @Test func xmlIsAPlistFoundationReads() throws {
        let data = ConfigWriter.data(
            for: PrivacyConfiguration(enabledFeatures: [.push, .contacts], resetEnabledFeatures: true), as: .xml)
        #expect(
            String(decoding: data, as: UTF8.self) == """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>enabledFeatures</key>
                \t<array>
                \t\t<string>contacts</string>
                \t\t<string>push</string>
                \t</array>
                \t<key>resetEnabledFeatures</key>
                \t<true/>
                </dict>
                </plist>

                """)
        let object = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        #expect(object?["enabledFeatures"] as? [String] == ["contacts", "push"])
        #expect(object?["resetEnabledFeatures"] as? Bool == true)
    }

    @Test func binaryIsAPlistFoundationReads() throws {
        let all = Feature.all.union(crashReports)
        let data = ConfigWriter.data(
            for: PrivacyConfiguration(enabledFeatures: all), as: .binary, catalog: customCatalog)
        #expect(data.starts(with: Array("bplist00".utf8)))
        var format = PropertyListSerialization.PropertyListFormat.xml
        let object = try PropertyListSerialization.propertyList(from: data, format: &format) as? [String: Any]
        #expect(format == .binary)
        #expect(object?["enabledFeatures"] as? [String] == customCatalog.names(of: all).sorted())
        #expect(object?["resetEnabledFeatures"] as? Bool == false)
    }

    @Test func bitsOutsideTheCatalogAreNotWritten() throws {
        let configuration = PrivacyConfiguration(enabledFeatures: Feature(rawValue: 1 << 3 | 1 << 20).union(.push))
        let data = ConfigWriter.data(for: configuration, as: .json)
        #expect(try ConfigReader().read(data).configuration.enabledFeatures == .push)
    }
}
