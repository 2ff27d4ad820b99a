import Foundation

/// Turns an already-parsed property list (`[String: Any]` from `Bundle.infoDictionary`, say) into a tree.
///
/// Booleans are told apart from integers even when Foundation hands them over as `NSNumber`; dictionary keys are
/// sorted, so diagnostics come out in a stable order.
package enum FoundationValueBridge {
    package static func node(from value: Any, limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        var budget = ParseBudget(limits)
        return try node(from: value, depth: 0, budget: &budget)
    }

    private static func node(
        from value: Any, depth: Int, budget: inout ParseBudget
    ) throws(ParseFailure)
        -> ConfigNode
    {
        try budget.countValue(line: nil)
        if type(of: value) == Bool.self, let flag = value as? Bool { return ConfigNode(.boolean(flag)) }
        // Only real NSNumber objects here: a Swift Int would bridge to NSNumber too, and lose nothing below.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return ConfigNode(numberValue(number))
        }
        if let text = value as? String { return ConfigNode(.string(text)) }
        if let integer = value as? any BinaryInteger {
            if let signed = Int64(exactly: integer) { return ConfigNode(.integer(ConfigInteger(signed))) }
            if let unsigned = UInt64(exactly: integer) { return ConfigNode(.integer(ConfigInteger(unsigned))) }
            let text = String(describing: integer)
            return ConfigNode(.integer(ConfigInteger(text: text, isNegative: text.hasPrefix("-"), magnitude: nil)))
        }
        if let real = value as? any BinaryFloatingPoint { return ConfigNode(.real("\(Double(real))")) }
        if let elements = value as? [Any] {
            try budget.checkDepth(depth + 1, line: nil)
            var nodes: [ConfigNode] = []
            nodes.reserveCapacity(elements.count)
            for element in elements { nodes.append(try node(from: element, depth: depth + 1, budget: &budget)) }
            return ConfigNode(.array(nodes))
        }
        if let dictionary = value as? [AnyHashable: Any] {
            try budget.checkDepth(depth + 1, line: nil)
            var entries: [ConfigNode.Entry] = []
            for (key, element) in dictionary {
                guard let key = key.base as? String else {
                    throw ParseFailure(
                        .wrongType, "a dictionary key is \(type(of: key.base)) \(key)",
                        found: "\(type(of: key.base))", expected: "string keys")
                }
                entries.append(
                    ConfigNode.Entry(
                        key: key, line: nil, value: try node(from: element, depth: depth + 1, budget: &budget))
                )
            }
            entries.sort { $0.key < $1.key }
            return ConfigNode(.dictionary(entries))
        }
        if let date = value as? Date {
            let seconds = date.timeIntervalSinceReferenceDate
            return ConfigNode(.date(text: PlistDateText.text(secondsSinceReferenceDate: seconds), seconds: seconds))
        }
        if let data = value as? Data { return ConfigNode(.data([UInt8](data))) }
        if value is NSNull { return ConfigNode(.null) }
        return ConfigNode(.other("a value of type \(type(of: value))"))
    }

    private static func numberValue(_ number: NSNumber) -> ConfigNode.Value {
        #if canImport(Darwin)
        if CFGetTypeID(number) == CFBooleanGetTypeID() { return .boolean(number.boolValue) }
        #else
        if type(of: number) != NSNumber.self, String(cString: number.objCType) == "c" {
            return .boolean(number.boolValue)
        }
        #endif
        switch String(cString: number.objCType) {
        case "f", "d": return .real("\(number.doubleValue)")
        case "Q", "L", "I", "S", "C": return .integer(ConfigInteger(number.uint64Value))
        default: return .integer(ConfigInteger(number.int64Value))
        }
    }
}
