#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The JSON conventions of App Store payloads.
///
/// App Store JSON writes every date as a number of milliseconds since 1970-01-01T00:00:00Z. Data signed by
/// StoreKit Testing in Xcode carries fractional milliseconds (`1697679936049.7297`) and dates far in the past
/// (`-62135769600000`, the year 1). The coders made here:
///
/// - decode a date from an integer or a fractional number, truncating toward zero to whole milliseconds (the
///   number as parsed to a `Double`, so `1697679936049.9999` is already `1697679936050`), and reject a value
///   that is not finite or whose magnitude exceeds ``maximumMilliseconds``;
/// - encode a date as an integer number of milliseconds, so that decoding and encoding again reproduces the
///   input exactly (fractions already truncated);
/// - encode with sorted keys and unescaped slashes. (The payload types themselves ignore JSON keys they do
///   not know.)
///
/// Use them for every payload type in this module; a plain `JSONDecoder` reads dates differently.
public enum AppStoreJSON {
    /// The largest magnitude, in milliseconds since 1970, of a date the decoder accepts: 2^48 - 1.
    ///
    /// That is about 8,900 years either side of 1970, so Xcode's year-1 dates pass. Within it a `Date` (a
    /// `Double` number of seconds) keeps every millisecond exactly, which is what lets a decoded date encode
    /// back to the same number; at 2^51 ms and above it no longer does.
    public static let maximumMilliseconds: Int64 = (1 << 48) - 1

    /// Makes a decoder for App Store payloads.
    ///
    /// - Returns: A `JSONDecoder` whose dates are milliseconds since 1970.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom(decodeDate)
        return decoder
    }

    /// Makes an encoder for App Store payloads.
    ///
    /// - Returns: A `JSONEncoder` that writes dates as integer milliseconds since 1970, sorts keys and does
    ///   not escape slashes.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom(encodeDate)
        return encoder
    }

    /// Converts a number of milliseconds read from the wire to whole milliseconds.
    ///
    /// - Parameter value: The number as decoded.
    /// - Returns: The value truncated toward zero, or `nil` when it is not finite or out of range.
    static func wholeMilliseconds(_ value: Double) -> Int64? {
        guard value.isFinite else {
            return nil
        }
        let truncated = value.rounded(.towardZero)
        guard truncated.magnitude <= Double(maximumMilliseconds) else {
            return nil
        }
        return Int64(truncated)
    }

    @Sendable
    private static func decodeDate(from decoder: any Decoder) throws -> Date {
        let container = try decoder.singleValueContainer()
        let value = try container.decode(Double.self)
        guard let milliseconds = wholeMilliseconds(value) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription:
                    "\(value) is not a date in milliseconds since 1970 within ±\(maximumMilliseconds) ms"
            )
        }
        return Date(millisecondsSince1970: milliseconds)
    }

    @Sendable
    private static func encodeDate(_ date: Date, to encoder: any Encoder) throws {
        guard let milliseconds = encodedMilliseconds(date) else {
            throw unencodableDate(date, codingPath: encoder.codingPath)
        }
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }

    /// The number of milliseconds the encoder writes for a date: rounded to the nearest, or `nil` when it does
    /// not fit in 64 bits (or is not a number).
    static func encodedMilliseconds(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        // -2^63 is exact in Double; 2^63 is the first value above Int64.max.
        guard milliseconds >= -0x1p63, milliseconds < 0x1p63 else {
            return nil
        }
        return Int64(milliseconds)
    }

    /// The error the encoder throws for a date it cannot write.
    ///
    /// The date is given and described by its seconds since 1970: describing a date that far out (or not a
    /// number) as a calendar date traps, and an error's description includes its value.
    static func unencodableDate(_ date: Date, codingPath: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(
            date.timeIntervalSince1970,
            EncodingError.Context(
                codingPath: codingPath,
                debugDescription:
                    "the date \(date.timeIntervalSince1970) s after 1970 cannot be written as a 64-bit number of "
                    + "milliseconds since 1970"
            )
        )
    }
}
