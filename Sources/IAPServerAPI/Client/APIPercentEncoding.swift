import IAPCore
/// Percent-encoding of path segments and query components for App Store Server API URLs.
///
/// Only RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`) pass unchanged; every other UTF-8 byte,
/// including `/`, `?`, `#`, `&`, `=`, `+` and `%`, is written as `%XX`. An identifier from a caller can then
/// never change which endpoint is called or add query parameters.
enum APIPercentEncoding {
    /// Encodes one path segment or one query name or value.
    ///
    /// - Parameter text: The raw text.
    /// - Returns: The text with every byte outside the unreserved set percent-encoded.
    static func encode(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%"
                result.unicodeScalars.append(hexDigit(byte >> 4))
                result.unicodeScalars.append(hexDigit(byte & 0x0F))
            }
        }
        return result
    }

    /// Encodes one path segment, also encoding the dots of a `.` or `..` segment so that no URL
    /// normalisation can turn it into a step up the path.
    ///
    /// - Parameter text: The raw segment; never empty (the client rejects empty identifiers first).
    /// - Returns: The encoded segment.
    static func pathSegment(_ text: String) -> String {
        if text == "." || text == ".." {
            return String(repeating: "%2E", count: text.count)
        }
        return encode(text)
    }

    /// Builds a query string (without the leading `?`) from ordered name-value pairs.
    ///
    /// - Parameter items: The pairs, in order; a name may repeat.
    /// - Returns: `name=value` pairs joined by `&`, each part percent-encoded.
    static func query(_ items: [(name: String, value: String)]) -> String {
        items.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexDigit(_ value: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10)
    }
}
