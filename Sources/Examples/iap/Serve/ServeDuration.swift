import IAPCommandLine

/// The durations of `iap serve`'s options: numbers with units (`90m`, `24h`, `1d`, `1h30m`; `s`, `m`, `h`, `d`), and
/// for some options a bare number of seconds (`3600`).
enum ServeDuration {
    /// Parses a duration.
    ///
    /// - Parameters:
    ///   - text: The option's value.
    ///   - option: The option, for messages (`--user-jwt-max-lifetime`).
    ///   - range: The seconds it may be.
    /// - Returns: The duration.
    /// - Throws: A usage error naming the option for anything else, or a duration out of `range`.
    static func parse(
        _ text: String,
        option: String,
        range: ClosedRange<Int64>
    ) throws(Arguments.UsageError) -> Duration {
        guard let seconds = seconds(text, allowsBareNumber: true) else {
            throw .init(message: "\(option) takes a duration such as 3600, 90m, 24h or 1h30m; not '\(text)'")
        }
        guard range.contains(seconds) else {
            throw .init(message: "\(option) must be from \(range.lowerBound)s to \(range.upperBound)s, not '\(text)'")
        }
        return .seconds(seconds)
    }

    /// The seconds a duration names, or `nil` when it is not one.
    ///
    /// - Parameters:
    ///   - text: The text, such as `1h30m`.
    ///   - allowsBareNumber: Whether digits without a unit count seconds (`3600`, or the tail of `1m30`).
    /// - Returns: The seconds.
    static func seconds(_ text: String, allowsBareNumber: Bool) -> Int64? {
        guard text.first?.isNumber == true else { return nil }
        var seconds: Int64 = 0
        var number = ""
        for character in text {
            if character.isASCII, character.isNumber {
                number.append(character)
                guard number.count <= 9 else { return nil }
                continue
            }
            let unit: Int64
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3_600
            case "d": unit = 86_400
            default: return nil
            }
            guard let value = Int64(number) else { return nil }
            let (sum, overflow) = seconds.addingReportingOverflow(value * unit)
            guard !overflow else { return nil }
            seconds = sum
            number = ""
        }
        if !number.isEmpty {
            guard allowsBareNumber, let value = Int64(number) else { return nil }
            let (sum, overflow) = seconds.addingReportingOverflow(value)
            guard !overflow else { return nil }
            seconds = sum
        }
        return seconds
    }
}
