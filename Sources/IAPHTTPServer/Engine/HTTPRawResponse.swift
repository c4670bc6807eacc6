#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An answer as the bytes of an HTTP/1.1 message, for the one the engine writes on a socket itself (a body over the
/// limit, while libmicrohttpd is still reading it): status line, the response's headers, `Date`, `Content-Length`,
/// `Connection: close`, the body.
enum HTTPRawResponse {
    /// The message's bytes.
    ///
    /// - Parameters:
    ///   - response: The answer; its headers were made by the engine (no line breaks).
    ///   - date: Now, for the `Date` header.
    /// - Returns: The whole message.
    static func bytes(of response: HTTPServerResponse, date: Date) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
        for field in response.headers {
            switch field.name.lowercased() {
            case "content-length", "transfer-encoding", "date", "connection":
                continue
            default:
                head += "\(field.name): \(field.value)\r\n"
            }
        }
        head += "Date: \(imfFixdate(date))\r\n"
        head += "Content-Length: \(response.body.count)\r\n"
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + Array(response.body)
    }

    /// The reason phrase of the statuses the engine writes itself.
    private static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 413: "Content Too Large"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }

    /// A date as HTTP writes it (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func imfFixdate(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (proleptic Gregorian), after H. Hinnant's `civil_from_days`.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = Int((days % 7 + 11) % 7)  // 1970-01-01 was a Thursday.
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let time = "\(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)):\(two(secondOfDay % 60))"
        return "\(weekdays[weekday]), \(two(day)) \(months[Int(month - 1)]) \(year) \(time) GMT"
    }
}
