#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The intervals of an analytics series, on the UTC calendar.
public enum AnalyticsInterval: String, Sendable, Hashable, CaseIterable, Codable {
    /// Calendar days (UTC).
    case day
    /// ISO weeks, Monday to Sunday (UTC).
    case week
    /// Calendar months (UTC).
    case month
}

/// UTC calendar arithmetic and the date formats of the analytics API, without a locale or a time zone database:
/// `YYYY-MM-DD` (midnight UTC) and RFC 3339 (`2026-06-01T00:00:00Z`, `2026-06-01T02:00:00+02:00`, with fractions of a
/// second) in, RFC 3339 UTC out.
public enum AnalyticsCalendar {
    private static let secondsPerDay: Int64 = 86_400

    /// Parses `YYYY-MM-DD` (midnight UTC) or an RFC 3339 date and time.
    ///
    /// - Parameter text: The date.
    /// - Returns: The instant, or `nil` when the text is neither (or names a day that does not exist).
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var seconds = daysFromCivil(year: year, month: month, day: day) * secondsPerDay
        if bytes.count == 10 {
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            hour < 24, minute < 60, second < 60
        else { return nil }
        seconds += hour * 3_600 + minute * 60 + second
        var index = 19
        var fraction: Double = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                fraction += Double(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > start, index < bytes.count else { return nil }
        }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index == bytes.count - 1 else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard bytes.count == index + 6, bytes[index + 3] == UInt8(ascii: ":"),
                let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)),
                hours < 24, minutes < 60
            else { return nil }
            let offset = hours * 3_600 + minutes * 60
            seconds += bytes[index] == UInt8(ascii: "+") ? -offset : offset
        default:
            return nil
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }

    /// An instant as RFC 3339 in UTC, to the second: `2026-06-01T00:00:00Z` (milliseconds when it has some).
    ///
    /// - Parameter date: The instant.
    /// - Returns: The text.
    public static func format(_ date: Date) -> String {
        let milliseconds = date.millisecondsSince1970
        let seconds = Int64((Double(milliseconds) / 1_000).rounded(.down))
        let rest = milliseconds - seconds * 1_000
        let days = Int64((Double(seconds) / Double(secondsPerDay)).rounded(.down))
        let (year, month, day) = civil(fromDays: days)
        let inDay = seconds - days * secondsPerDay
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text = "\(year)-\(two(month))-\(two(day))T\(two(inDay / 3_600)):\(two(inDay / 60 % 60)):\(two(inDay % 60))"
        if rest > 0 {
            text += "." + String(String(rest + 1_000).dropFirst())
        }
        return text + "Z"
    }

    /// The start of the interval that holds `date`: midnight UTC of its day, of the Monday of its ISO week, or of the
    /// first of its month.
    public static func start(of interval: AnalyticsInterval, holding date: Date) -> Date {
        let days = Int64((date.timeIntervalSince1970 / Double(secondsPerDay)).rounded(.down))
        switch interval {
        case .day:
            return Date(timeIntervalSince1970: TimeInterval(days * secondsPerDay))
        case .week:
            // 1970-01-01 was a Thursday: Monday is 3 days before it.
            let weekday = ((days + 3) % 7 + 7) % 7  // 0 on Monday
            return Date(timeIntervalSince1970: TimeInterval((days - weekday) * secondsPerDay))
        case .month:
            let (year, month, _) = civil(fromDays: days)
            return Date(
                timeIntervalSince1970: TimeInterval(daysFromCivil(year: year, month: month, day: 1) * secondsPerDay)
            )
        }
    }

    /// The start of the interval after the one that starts at `start`.
    public static func next(after start: Date, interval: AnalyticsInterval) -> Date {
        let days = Int64((start.timeIntervalSince1970 / Double(secondsPerDay)).rounded(.down))
        switch interval {
        case .day:
            return Date(timeIntervalSince1970: TimeInterval((days + 1) * secondsPerDay))
        case .week:
            return Date(timeIntervalSince1970: TimeInterval((days + 7) * secondsPerDay))
        case .month:
            let (year, month, _) = civil(fromDays: days)
            let (nextYear, nextMonth) = month == 12 ? (year + 1, Int64(1)) : (year, month + 1)
            return Date(
                timeIntervalSince1970: TimeInterval(
                    daysFromCivil(year: nextYear, month: nextMonth, day: 1) * secondsPerDay
                )
            )
        }
    }

    /// The buckets of `[from, to)`: calendar intervals, the first and last cut to the range.
    public static func buckets(from: Date, to: Date, interval: AnalyticsInterval) -> [Range<Date>] {
        var buckets: [Range<Date>] = []
        var start = from
        while start < to {
            let end = min(next(after: Self.start(of: interval, holding: start), interval: interval), to)
            buckets.append(start..<end)
            start = end
        }
        return buckets
    }

    // MARK: Civil dates (proleptic Gregorian), after Howard Hinnant's algorithms

    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// What an analytics report covers, as a request names it (`iap ledger analytics`, `GET /iap/v1/analytics`): texts
/// in, checked values out.
public struct AnalyticsQuery: Sendable, Hashable {
    /// The start of the range (inclusive).
    public var from: Date
    /// The end of the range (exclusive).
    public var to: Date
    /// The intervals of the series.
    public var interval: AnalyticsInterval
    /// The App Store environment counted.
    public var environment: AppStoreEnvironment
    /// Only this product, when given.
    public var productId: String?

    /// Checks a request's texts.
    ///
    /// - Parameters:
    ///   - from: `YYYY-MM-DD` or RFC 3339 (required).
    ///   - to: The same, after `from` (required, exclusive).
    ///   - interval: `day` (the default), `week` or `month`.
    ///   - environment: `Production` (the default), `Sandbox`, `Xcode` or `LocalTesting`.
    ///   - productId: A product id, or `nil` for every product.
    /// - Throws: ``IAPError`` `invalidArgument` naming the value and what it must be.
    public init(from: String?, to: String?, interval: String?, environment: String?, productId: String?)
        throws(IAPError)
    {
        func date(_ text: String?, _ name: String) throws(IAPError) -> Date {
            guard let text else {
                throw IAPError(.invalidArgument, "\(name) is required: YYYY-MM-DD or RFC 3339")
            }
            guard let date = AnalyticsCalendar.parse(text) else {
                throw IAPError(.invalidArgument, "\(name) must be YYYY-MM-DD or RFC 3339")
            }
            return date
        }
        self.from = try date(from, "from")
        self.to = try date(to, "to")
        guard self.from < self.to else {
            throw IAPError(.invalidArgument, "to must be after from")
        }
        guard let interval = AnalyticsInterval(rawValue: interval ?? "day") else {
            throw IAPError(.invalidArgument, "interval must be day, week or month")
        }
        self.interval = interval
        let environmentName = environment ?? AppStoreEnvironment.production.rawValue
        guard let environment = AppStoreEnvironment.allKnown.first(where: { $0.rawValue == environmentName }) else {
            let known = AppStoreEnvironment.allKnown.map(\.rawValue).joined(separator: ", ")
            throw IAPError(.invalidArgument, "environment must be one of \(known)")
        }
        self.environment = environment
        if let productId, productId.isEmpty || productId.utf8.count > 256 {
            throw IAPError(.invalidArgument, "product must be a product id")
        }
        self.productId = productId
    }
}
