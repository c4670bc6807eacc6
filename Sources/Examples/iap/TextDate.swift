import Foundation
import IAPCommandLine
import IAPCore

/// Dates as the tool writes them for people, and the instants its options accept.
///
/// Text output shows dates in ISO 8601, UTC, to the second (`2026-01-01T00:00:05Z`); JSON output keeps Apple's
/// milliseconds since 1970. Options that take an instant accept both forms.
enum TextDate {
    /// `2026-01-01T00:00:05Z`.
    static func text(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }

    /// `2026-01-01T00:00:05Z`, or `-` for no date.
    static func text(_ date: Date?) -> String {
        date.map(text) ?? "-"
    }

    /// An instant given as milliseconds since 1970 or as an ISO 8601 date and time
    /// (`2026-01-01T00:00:05Z`, with fractional seconds or a UTC offset if wanted).
    ///
    /// - Throws: `Arguments.UsageError` naming the option for anything else.
    static func instant(_ text: String, option: String) throws(Arguments.UsageError) -> Date {
        if let millis = Int64(text), millis.magnitude <= UInt64(AppStoreJSON.maximumMilliseconds) {
            return Date(millisecondsSince1970: millis)
        }
        if let date = try? Date.ISO8601FormatStyle().parse(text) {
            return date
        }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
            return date
        }
        throw Arguments.UsageError(
            message:
                "--\(option) takes milliseconds since 1970 or an ISO 8601 time (2026-01-01T00:00:05Z), not '\(text)'"
        )
    }
}
