import IAPCore

/// The parts of a request target (`/users/a%20b/history?limit=5`): the path, its decoded segments, the query.
struct HTTPRequestTarget: Sendable {
    /// The path as sent, without the query.
    var path: String
    /// The path's segments, percent-decoded, without empty ones.
    var segments: [String]
    /// The query pairs in order, percent-decoded, `+` read as a space.
    var query: [(name: String, value: String)]

    /// Parses an origin-form target (`/path?query`), or an absolute-form one (`http://host/path?query`) whose
    /// scheme and authority are dropped.
    ///
    /// - Parameter target: The target as sent on the request line.
    /// - Returns: The parts, or `nil` when the target is not a path, holds a control character, or has a
    ///   percent sign that is not followed by two hexadecimal digits or decodes to invalid UTF-8.
    init?(_ target: String) {
        var rest = Substring(target)
        for scheme in ["http://", "https://"] where rest.lowercased().hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
            guard let slash = rest.firstIndex(of: "/") else {
                rest = "/"
                break
            }
            rest = rest[slash...]
        }
        guard rest.first == "/", !rest.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) else { return nil }
        let pathPart: Substring
        let queryPart: Substring?
        if let mark = rest.firstIndex(of: "?") {
            pathPart = rest[..<mark]
            queryPart = rest[rest.index(after: mark)...]
        } else {
            pathPart = rest
            queryPart = nil
        }
        var segments: [String] = []
        for raw in pathPart.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = Self.percentDecoded(raw.utf8, plusIsSpace: false) else { return nil }
            segments.append(decoded)
        }
        var query: [(name: String, value: String)] = []
        for pair in (queryPart ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let equals = pair.firstIndex(of: "=") {
                name = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                name = pair
                value = ""
            }
            guard let decodedName = Self.percentDecoded(name.utf8, plusIsSpace: true),
                let decodedValue = Self.percentDecoded(value.utf8, plusIsSpace: true)
            else { return nil }
            query.append((decodedName, decodedValue))
        }
        self.path = String(pathPart)
        self.segments = segments
        self.query = query
    }

    /// Decodes `%XX` escapes (and `+` when asked); `nil` for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring.UTF8View, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "%") {
                let high = text.index(after: index)
                guard high < text.endIndex else { return nil }
                let low = text.index(after: high)
                guard low < text.endIndex, let first = Hex.value(text[high]), let second = Hex.value(text[low]) else {
                    return nil
                }
                bytes.append(first << 4 | second)
                index = text.index(after: low)
                continue
            }
            bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index = text.index(after: index)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
