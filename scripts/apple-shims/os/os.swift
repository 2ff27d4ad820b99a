// Shim of Apple's os module (the unified log's `Logger`: iOS 14, macOS 11, tvOS 14, watchOS 7, visionOS 1) for
// scripts/check-apple-branches.sh: the declarations the package uses, with the SDK's signatures. Bodies never run.
// `Logger` is declared without a Sendable conformance: the package's code must not rely on one.

/// https://developer.apple.com/documentation/os/logger
public struct Logger {
    /// https://developer.apple.com/documentation/os/logger/init(subsystem:category:)
    public init(subsystem: String, category: String) { fatalError("shim") }

    /// https://developer.apple.com/documentation/os/logger/info(_:)
    public func info(_ message: OSLogMessage) { fatalError("shim") }
}

/// https://developer.apple.com/documentation/os/oslogmessage
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    /// https://developer.apple.com/documentation/os/oslogmessage/init(stringliteral:)
    public init(stringLiteral value: String) { fatalError("shim") }
    /// https://developer.apple.com/documentation/os/oslogmessage/init(stringinterpolation:)
    public init(stringInterpolation: OSLogInterpolation) { fatalError("shim") }
}

/// https://developer.apple.com/documentation/os/osloginterpolation
public struct OSLogInterpolation: StringInterpolationProtocol {
    /// https://developer.apple.com/documentation/os/osloginterpolation/init(literalcapacity:interpolationcount:)
    public init(literalCapacity: Int, interpolationCount: Int) { fatalError("shim") }
    /// https://developer.apple.com/documentation/os/osloginterpolation/appendliteral(_:)
    public mutating func appendLiteral(_ literal: String) { fatalError("shim") }

    /// https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:align:privacy:)-1bwv8
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) { fatalError("shim") }
}

/// https://developer.apple.com/documentation/os/oslogstringalignment
public struct OSLogStringAlignment {
    /// https://developer.apple.com/documentation/os/oslogstringalignment/none
    public static var none: OSLogStringAlignment { fatalError("shim") }
}

/// https://developer.apple.com/documentation/os/oslogprivacy
public struct OSLogPrivacy: Equatable {
    /// https://developer.apple.com/documentation/os/oslogprivacy/auto
    public static var auto: OSLogPrivacy { fatalError("shim") }
    /// https://developer.apple.com/documentation/os/oslogprivacy/public
    public static var `public`: OSLogPrivacy { fatalError("shim") }
    /// https://developer.apple.com/documentation/os/oslogprivacy/private
    public static var `private`: OSLogPrivacy { fatalError("shim") }
}
