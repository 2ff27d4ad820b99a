import FeatureGate
import FeatureGateConfig

/// A problem with the command line: printed with the command's usage, exit status 2.
struct UsageError: Error {
    var message: String
}

/// Splits a command's arguments into options and operands, by a small table of what each command accepts.
///
/// Accepts `--name value`, `--name=value`, `-o value`, and `--` to end options. A lone `-` is an operand
/// (standard input). Unknown options are a ``UsageError`` that suggests the closest known one, unless
/// `unknownOptionsAreOperands`: then an argument that is not exactly a known option is an operand (a TC string
/// can start with `-`).
struct ParsedArguments {
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    var operands: [String] = []

    init(
        _ arguments: [String], flags allowedFlags: Set<String>, valued allowedValued: Set<String>,
        unknownOptionsAreOperands: Bool = false
    ) throws(UsageError) {
        var index = 0
        var onlyOperands = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyOperands || argument == "-" || !argument.hasPrefix("-") {
                operands.append(argument)
                continue
            }
            if argument == "--" {
                onlyOperands = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            // Exactly a known option: a flag without a value, or a valued option (`--name=value` or `--name value`).
            let isOption = allowedValued.contains(name) || (inlineValue == nil && allowedFlags.contains(name))
            if unknownOptionsAreOperands && !isOption {
                operands.append(argument)
            } else if allowedFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "option '\(name)' takes no value") }
                flags.insert(name)
            } else if allowedValued.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else {
                        throw UsageError(message: "option '\(name)' needs a value")
                    }
                    value = arguments[index]
                    index += 1
                }
                values[name, default: []].append(value)
            } else {
                let known = (allowedFlags.union(allowedValued)).sorted()
                let hint = NameMatching.closest(to: name, among: known).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError(message: "unknown option '\(name)'\(hint)")
            }
        }
    }

    /// The single value of a valued option, or `nil`; giving it twice is a usage error.
    func value(_ name: String) throws(UsageError) -> String? {
        guard let given = values[name] else { return nil }
        guard given.count == 1 else { throw UsageError(message: "option '\(name)' is given more than once") }
        return given[0]
    }

    /// The one operand a command takes: `no NAME given` without it, `tooMany` when there are several.
    func onlyOperand(_ name: String, tooMany: @autoclosure () -> String) throws(UsageError) -> String {
        guard operands.count == 1, let operand = operands.first else {
            throw UsageError(message: operands.isEmpty ? "no \(name) given" : tooMany())
        }
        return operand
    }

    /// The required option `name`, read as a `T`: `missing` without it, `NAME VALUE: expected EXPECTED` when the value
    /// is not one of `T`'s.
    func required<T: RawRepresentable<String>>(
        _ name: String, as _: T.Type, missing: String, expected: String
    ) throws(UsageError) -> T {
        guard let value = try value(name) else { throw UsageError(message: missing) }
        guard let parsed = T(rawValue: value) else {
            throw UsageError(message: "\(name) \(value): expected \(expected)")
        }
        return parsed
    }
}

/// The options every command shares: the reading mode and the SDK's own flags.
struct ReadingOptions {
    static let flags: Set<String> = ["--lenient", "--airship"]
    static let valued: Set<String> = ["--flag"]

    /// FeatureGate's reading: strict, lenient, or (for a command where `--airship` chooses the reading) Airship's.
    var reader: ConfigReader
    /// Whether `--airship` was given.
    var airship: Bool

    /// Reads the options. With `airshipAddsReadings` (`check`), `--airship` adds Airship's readings to FeatureGate's
    /// strict or lenient one, so it goes with `--lenient`; otherwise it is the reading, and conflicts with it.
    init(_ parsed: ParsedArguments, airshipAddsReadings: Bool = false) throws(UsageError) {
        airship = parsed.flags.contains("--airship")
        let lenient = parsed.flags.contains("--lenient")
        if lenient && airship && !airshipAddsReadings {
            throw UsageError(
                message: "--lenient and --airship conflict: give one (--airship already drops unknown names)")
        }
        let mode: ConfigReadingMode =
            airship && !airshipAddsReadings ? .airshipCompatible : lenient ? .lenient : .strict
        var catalog = FeatureCatalog.builtIn
        for declaration in parsed.values["--flag"] ?? [] {
            let parts = declaration.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let bit = Int(parts[1]),
                (Feature.firstCustomBit...Feature.lastCustomBit).contains(bit)
            else {
                throw UsageError(
                    message: "--flag \(declaration): expected NAME=BIT with BIT in "
                        + "\(Feature.firstCustomBit)...\(Feature.lastCustomBit), e.g. --flag crash_reports=16")
            }
            do {
                catalog = try catalog.registering(String(parts[0]), as: .custom(bit: bit))
            } catch {
                throw UsageError(message: "--flag \(declaration): \(error)")
            }
        }
        reader = ConfigReader(mode: mode, catalog: catalog)
    }

    static let help = """
          --lenient           Drop unknown feature names with a warning instead of failing.
          --airship           Read as Airship does: a missing enabledFeatures enables every feature (with a
                              warning), and unknown names are dropped with a warning. Implies --lenient;
                              giving both is a usage error.
          --flag NAME=BIT     Accept a flag your SDK registers (BIT in 16...31). Repeat for more flags.
        """
}
