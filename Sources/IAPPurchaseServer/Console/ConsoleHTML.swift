#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPHTTPServer

/// The console's HTML: every value escaped where it is written, every page with the same security headers.
enum ConsoleHTML {
    /// Text as HTML: `&`, `<`, `>`, `"` and `'` escaped, so that a value (a product id, a user id, a notification's
    /// field: attacker-chosen in Sandbox) can never become markup, in text or in an attribute.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Text as one component of a URL's query: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
    /// percent-encoded, so that it is safe in a link's `href` as well.
    static func queryComponent(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The headers of every console answer: no script from anywhere (no inline script, no other host), no framing,
    /// no sniffing, no referrer, nothing cached.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
                + "base-uri 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    /// A whole page.
    static func page(title: String, body: String, status: Int = 200, cookie: String? = nil) -> HTTPServerResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title)) · iap console</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <link rel="stylesheet" href="/console/console.css"></head>
            <body>\(body)</body></html>

            """
        var response = HTTPServerResponse(status: status, body: Data(html.utf8))
        response.headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        for (name, value) in securityHeaders {
            response.headers.add(name: name, value: value)
        }
        if let cookie {
            response.headers.add(name: "Set-Cookie", value: cookie)
        }
        return response
    }

    /// A redirect after a form (303 See Other).
    static func redirect(to location: String, cookie: String? = nil) -> HTTPServerResponse {
        var response = HTTPServerResponse(status: 303)
        response.headers.add(name: "Location", value: location)
        for (name, value) in securityHeaders {
            response.headers.add(name: name, value: value)
        }
        if let cookie {
            response.headers.add(name: "Set-Cookie", value: cookie)
        }
        return response
    }

    /// The fields of an `application/x-www-form-urlencoded` body (the first of each name; `+` is a space).
    static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? {
                var bytes: [UInt8] = []
                var iterator = text.utf8.makeIterator()
                while let byte = iterator.next() {
                    switch byte {
                    case UInt8(ascii: "+"):
                        bytes.append(UInt8(ascii: " "))
                    case UInt8(ascii: "%"):
                        guard let high = iterator.next(), let low = iterator.next(),
                            let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                        else { return nil }
                        bytes.append(value)
                    default:
                        bytes.append(byte)
                    }
                }
                return String(validating: bytes, as: UTF8.self)
            }
            guard let name = decode(parts[0]), fields[name] == nil else { continue }
            fields[name] = parts.count > 1 ? decode(parts[1]) ?? "" : ""
        }
        return fields
    }

    /// The stylesheet (served as a file: the policy allows no inline style).
    static let stylesheet = """
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
        header { background: #1f2a37; color: #fff; padding: 0.6em 1em; display: flex; flex-wrap: wrap; gap: 1em;
                 align-items: center; }
        header a { color: #fff; } header form { display: inline-flex; gap: 0.4em; align-items: center; margin: 0; }
        main { padding: 1em 1.5em; max-width: 72em; }
        table { border-collapse: collapse; background: #fff; margin: 0.5em 0 1.5em; }
        th, td { border: 1px solid #d0d7de; padding: 0.3em 0.6em; text-align: left; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; }
        .error { color: #a40e26; } .note { color: #57606a; }
        label { margin-right: 0.3em; } input, button { font: inherit; }
        .charts { display: flex; flex-wrap: wrap; gap: 1em; } figure { margin: 0; background: #fff; padding: 0.5em;
                  border: 1px solid #d0d7de; } figcaption { font-size: 0.85em; color: #57606a; }
        form.sign-in { display: grid; gap: 0.6em; max-width: 22em; margin: 3em auto; background: #fff; padding: 1.5em;
                       border: 1px solid #d0d7de; }

        """
}
