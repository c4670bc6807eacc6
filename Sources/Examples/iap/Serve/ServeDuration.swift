/// A duration option of `iap serve` other than `--reconcile-every`: a number of seconds (`3600`) or numbers with
/// units (`90m`, `24h`, `1d`, `1h30m`; `s`, `m`, `h`, `d`).
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
        let usage = Arguments.UsageError(
            message: "\(option) takes a duration such as 3600, 90m, 24h or 1h30m; not '\(text)'"
        )
        var seconds: Int64 = 0
        var number = ""
        for character in text {
            if character.isASCII, character.isNumber {
                number.append(character)
                guard number.count <= 9 else { throw usage }
                continue
            }
            let unit: Int64
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3_600
            case "d": unit = 86_400
            default: throw usage
            }
            guard let value = Int64(number) else { throw usage }
            seconds += value * unit
            number = ""
        }
        if !number.isEmpty {
            // A bare number, or what follows the last unit, counts seconds: "3600", "1m30".
            guard let value = Int64(number) else { throw usage }
            seconds += value
        }
        guard !text.isEmpty, text.first?.isNumber == true else { throw usage }
        guard range.contains(seconds) else {
            throw .init(message: "\(option) must be from \(range.lowerBound)s to \(range.upperBound)s, not '\(text)'")
        }
        return .seconds(seconds)
    }
}
