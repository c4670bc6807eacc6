import CIAPLibPQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps PostgreSQL passwords out of every message the store makes.
///
/// libpq quotes what it cannot parse (`invalid percent-encoded token: "S3cretPW%zz"`, a malformed IPv6 host with
/// the whole URL), and its connection failures, the server's errors and our own messages are passed on to
/// operators, logs and events. The redactor knows every form the password of a connection can take — as written
/// in the URL's user info (read the way libpq reads it, and up to the last `@` the way a person may have meant it),
/// percent-decoded, in a `password=` query parameter or connection-string keyword, as libpq parsed it, the
/// configuration's own ``PostgresEntitlementStore/Configuration/password``, and `PGPASSWORD` — and replaces each
/// with `***` in a message. It never needs the URL to be valid.
struct PostgresPasswordRedactor: Sendable {
    /// What stands in for a password.
    static let mask = "***"

    /// Every form of the secrets, longest first (so a longer form is replaced before a part of it).
    private let secrets: [String]

    /// The redactor of a connection's URL or connection string and its separate password.
    ///
    /// - Parameters:
    ///   - conninfo: The URL or `key=value` connection string.
    ///   - password: The password given apart from it, if any.
    ///   - environment: `PGPASSWORD`, which libpq reads when no password is given.
    init(conninfo: String, password: String?, environment: String? = Self.environmentPassword()) {
        var found = Self.passwords(in: conninfo)
        found += [password, environment].compactMap { $0 }
        found += Self.parsedPassword(conninfo).map { [$0] } ?? []
        secrets = Set(found.filter { !$0.isEmpty }).sorted { $0.count > $1.count }
    }

    /// Whether the URL or connection string itself carries a password.
    static func holdsPassword(_ conninfo: String) -> Bool {
        !passwords(in: conninfo).isEmpty || parsedPassword(conninfo) != nil
    }

    /// `message` with every form of the passwords replaced by `***`.
    func redact(_ message: String) -> String {
        var text = message
        for secret in secrets where text.contains(secret) {
            text = text.replacing(secret, with: Self.mask)
        }
        return text
    }

    // MARK: - Finding passwords

    /// `PGPASSWORD`, if set.
    static func environmentPassword() -> String? {
        guard let value = getenv("PGPASSWORD") else { return nil }
        return String(cString: value)
    }

    /// The password libpq itself reads from the text, when it can parse it.
    private static func parsedPassword(_ conninfo: String) -> String? {
        guard !conninfo.utf8.contains(0) else { return nil }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            PQfreemem(error)
            return nil
        }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val {
                let password = String(cString: value)
                return password.isEmpty ? nil : password
            }
            option += 1
        }
        return nil
    }

    /// Every way of reading a password in the text, whether or not libpq can parse it, each as written and
    /// decoded.
    static func passwords(in conninfo: String) -> [String] {
        let raw: [Substring]
        if let scheme = ["postgresql://", "postgres://"].first(where: { conninfo.hasPrefix($0) }) {
            raw = urlPasswords(conninfo.dropFirst(scheme.count))
        } else {
            raw = keywordPasswords(conninfo[...])
        }
        var forms: [String] = []
        for password in raw where !password.isEmpty {
            forms.append(String(password))
            if let decoded = percentDecoded(password), decoded != String(password) {
                forms.append(decoded)
            }
        }
        return forms
    }

    /// The password of the user info, read up to the first `@` before a `/` (libpq's rule) and up to the last `@`
    /// before the query (a password holding `@` or `/` unencoded), and the `password=` query parameters.
    private static func urlPasswords(_ rest: Substring) -> [Substring] {
        var passwords: [Substring] = []
        let query = rest.firstIndex(of: "?")
        let beforeQuery = rest[..<(query ?? rest.endIndex)]
        var userInfos: [Substring] = []
        if let at = rest.firstIndex(where: { $0 == "@" || $0 == "/" }), rest[at] == "@" {
            userInfos.append(rest[..<at])
        }
        if let at = beforeQuery.lastIndex(of: "@") {
            userInfos.append(beforeQuery[..<at])
        }
        for userInfo in userInfos {
            if let colon = userInfo.firstIndex(of: ":") {
                passwords.append(userInfo[userInfo.index(after: colon)...])
            }
        }
        if let query {
            for parameter in rest[rest.index(after: query)...].split(separator: "&") {
                let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, percentDecoded(parts[0]) == "password" else { continue }
                passwords.append(parts[1])
            }
        }
        return passwords
    }

    /// The values of `password` keywords in a connection string (`password=secret`, `password = 'a b\'c'`), as
    /// written and unquoted; an unterminated quote runs to the end.
    private static func keywordPasswords(_ text: Substring) -> [Substring] {
        var passwords: [Substring] = []
        var rest = text
        while let range = rest.firstRange(of: "password") {
            var value = rest[range.upperBound...].drop(while: { $0 == " " || $0 == "\t" })
            rest = rest[range.upperBound...]
            guard value.first == "=" else { continue }
            value = value.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
            if value.first == "'" {
                var end = value.index(after: value.startIndex)
                var escaped = false
                while end < value.endIndex, escaped || value[end] != "'" {
                    escaped = !escaped && value[end] == "\\"
                    end = value.index(after: end)
                }
                let inner = value[value.index(after: value.startIndex)..<end]
                passwords.append(inner)
                passwords.append(inner.replacing("\\'", with: "'").replacing("\\\\", with: "\\"))
            } else {
                passwords.append(value.prefix(while: { !$0.isWhitespace }))
            }
        }
        return passwords
    }

    /// `%XX` sequences decoded, or `nil` when the text holds a broken one or is not UTF-8 once decoded.
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.first {
            utf8 = utf8.dropFirst()
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
