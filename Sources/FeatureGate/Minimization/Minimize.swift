#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Helpers that keep what analytics needs and drop what identifies a person.
///
/// Each helper returns `nil` for input it cannot parse: a value that cannot be minimized is dropped, not sent
/// as it was.
public enum Minimize {
    /// Truncates an IP address: IPv4 to its /24 network, IPv6 to its /48 network.
    ///
    /// `"192.0.2.77"` becomes `"192.0.2.0"`; `"2001:db8:abcd:12::1"` becomes `"2001:db8:abcd::"`. An IPv4-mapped
    /// IPv6 address keeps its mapping and truncates the IPv4 part to /24. A zone index (`%en0`) is dropped.
    ///
    /// - Returns: The truncated address in canonical form, or `nil` when `address` is not an IP address.
    public static func truncateIPAddress(_ address: String) -> String? {
        if let truncated = truncateIPv4(address) { return truncated }
        return truncateIPv6(address)
    }

    /// Truncates a dotted-quad IPv4 address to its /24 network, or returns `nil` when it is not one.
    public static func truncateIPv4(_ address: String) -> String? {
        var raw = in_addr()
        guard inet_pton(AF_INET, address, &raw) == 1 else { return nil }
        withUnsafeMutableBytes(of: &raw) { $0[3] = 0 }
        return withUnsafeBytes(of: &raw) { format(family: AF_INET, $0, length: Int(INET_ADDRSTRLEN)) }
    }

    /// Truncates an IPv6 address to its /48 network, or returns `nil` when it is not one.
    public static func truncateIPv6(_ address: String) -> String? {
        let withoutZone =
            address.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first
            .map(String.init) ?? address
        var raw = in6_addr()
        guard inet_pton(AF_INET6, withoutZone, &raw) == 1 else { return nil }
        withUnsafeMutableBytes(of: &raw) { bytes in
            let isIPv4Mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            let keep = isIPv4Mapped ? 15 : 6
            for index in keep..<16 { bytes[index] = 0 }
        }
        return withUnsafeBytes(of: &raw) { format(family: AF_INET6, $0, length: Int(INET6_ADDRSTRLEN)) }
    }

    /// Snaps a coordinate down to a grid of `decimals` decimal places (2 ≈ 1.1 km, 1 ≈ 11 km at the equator).
    ///
    /// Rounding is toward negative infinity, so every point of one grid cell maps to the cell's corner.
    ///
    /// - Returns: The coarsened pair, or `nil` when a value is not finite or out of range, or `decimals` is not in
    ///   `0...6`.
    public static func coarsen(
        latitude: Double, longitude: Double, decimals: Int = 2
    ) -> (
        latitude: Double, longitude: Double
    )? {
        guard (0...6).contains(decimals), latitude.isFinite, longitude.isFinite,
            (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return ((latitude * scale).rounded(.down) / scale, (longitude * scale).rounded(.down) / scale)
    }

    private static func format(family: Int32, _ address: UnsafeRawBufferPointer, length: Int) -> String? {
        var buffer = [CChar](repeating: 0, count: length)
        guard inet_ntop(family, address.baseAddress, &buffer, socklen_t(length)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
