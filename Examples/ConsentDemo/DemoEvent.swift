import FeatureGate
import Foundation

/// An analytics event of the demo SDK. Only the factory methods make one, so every property key is one the SDK
/// declared in ``DemoEvent/fieldPolicy``; nothing free-form reaches the pipeline.
///
/// Events carry raw values (a full IP address, precise coordinates, an e-mail address, an advertising identifier):
/// `DemoSDK.track` sanitizes and minimizes them before anything is queued.
struct DemoEvent: Sendable {
    let name: String
    let properties: [String: EventValue]

    private init(_ name: String, _ properties: [String: EventValue]) {
        self.name = name
        self.properties = properties
    }

    /// A screen was shown.
    static func screenView(name: String) -> DemoEvent {
        DemoEvent("screen_view", ["screen": .string(name)])
    }

    /// Something was bought; the receipt e-mail goes along only while contacts is enabled.
    static func purchase(productID: String, amount: Double, currency: String, email: String?) -> DemoEvent {
        var properties: [String: EventValue] = [
            "product_id": .string(productID), "amount": .double(amount), "currency": .string(currency),
        ]
        if let email { properties["email"] = .string(email) }
        return DemoEvent("purchase", properties)
    }

    /// An ad was shown; the advertising identifier goes along only with advertising consent, and there is one only
    /// while App Tracking Transparency is authorized.
    static func adImpression(campaign: String, advertisingID: UUID?) -> DemoEvent {
        var properties: [String: EventValue] = ["campaign": .string(campaign)]
        if let advertisingID { properties["advertising_id"] = .string(advertisingID.uuidString) }
        return DemoEvent("ad_impression", properties)
    }

    /// Where the app was used: the IP address is truncated and the coordinates coarsened before queueing.
    static func location(ip: String, latitude: Double, longitude: Double) -> DemoEvent {
        DemoEvent("location", ["ip": .string(ip), "latitude": .double(latitude), "longitude": .double(longitude)])
    }

    /// What each key needs: FeatureGate's defaults (advertising identifiers need advertising consent, e-mail needs
    /// contacts, ...) plus the demo's own keys, which need nothing beyond analytics. Undeclared keys are dropped.
    static let fieldPolicy = FieldPolicy(
        requirements: FieldPolicy.default.requirements.merging(
            ["screen", "product_id", "amount", "currency", "campaign", "ip", "latitude", "longitude"].map {
                ($0, FieldRequirement.none)
            },
            uniquingKeysWith: { kept, _ in kept }
        ),
        untaggedKeys: .drop
    )

    /// The `index`th event of a `track:N` step: a screen view, a purchase, an ad impression, a location, repeating.
    static func sample(_ index: Int, advertisingID: UUID?) -> DemoEvent {
        switch index % 4 {
        case 0: .screenView(name: ["home", "catalog", "cart", "settings"][(index / 4) % 4])
        case 1: .purchase(productID: "sku-\(101 + index)", amount: 4.99, currency: "EUR", email: "ada@example.com")
        case 2: .adImpression(campaign: "spring-sale", advertisingID: advertisingID)
        default: .location(ip: "203.0.113.77", latitude: 52.516275, longitude: 13.377704)
        }
    }
}

/// An event after sanitizing and minimizing: what may leave the device, and what was taken out or coarsened.
struct SanitizedEvent: Sendable {
    let name: String
    let properties: [String: EventValue]
    /// `email (needs contacts)`, one per key removed.
    let stripped: [String]
    /// `ip 203.0.113.77 -> 203.0.113.0`, one per value minimized.
    let minimized: [String]

    /// Strips what `sanitizer` does not allow, then truncates the IP address and coarsens the coordinates. A
    /// value that cannot be minimized is dropped, never sent as it was.
    init(_ event: DemoEvent, sanitizer: EventSanitizer) {
        let sanitized = sanitizer.sanitize(event.properties)
        var properties = sanitized.properties
        var minimized: [String] = []
        if case .string(let ip)? = properties["ip"] {
            let truncated = Minimize.truncateIPAddress(ip)
            properties["ip"] = truncated.map(EventValue.string)
            minimized.append("ip \(ip) -> \(truncated ?? "dropped (not an IP address)")")
        }
        if case .double(let latitude)? = properties["latitude"], case .double(let longitude)? = properties["longitude"]
        {
            let coarse = Minimize.coarsen(latitude: latitude, longitude: longitude, decimals: 2)
            properties["latitude"] = coarse.map { .double($0.latitude) }
            properties["longitude"] = coarse.map { .double($0.longitude) }
            minimized.append(
                "coordinates \(latitude),\(longitude) -> "
                    + (coarse.map { "\($0.latitude),\($0.longitude)" } ?? "dropped (out of range)"))
        }
        self.name = event.name
        self.properties = properties
        self.minimized = minimized
        self.stripped = sanitized.removedKeys.map { key in
            switch sanitizer.policy.requirements[key] {
            case .consent(let category)?:
                "\(key) (needs \(category) consent, which is \(sanitizer.consent[category] ?? .unknown))"
            case .feature(let features)?:
                "\(key) (needs \(FeatureCatalog.builtIn.names(of: features).joined(separator: ", ")), which is off)"
            case .some(FieldRequirement.none), nil:
                "\(key) (not declared)"
            }
        }
    }
}

/// An event property as JSON: strings quoted, numbers and booleans bare.
struct JSONEventValue: Encodable {
    let value: EventValue

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}
