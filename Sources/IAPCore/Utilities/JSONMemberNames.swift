#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The member names of a JSON object's top level, read from its text: `JSONDecoder` keeps one of two members of the
/// same name without saying so, and parsers disagree on which, so that a proxy or a log that takes the other one would
/// see another request than the one acted on. Every JSON body the server takes (a submission, a notification, an
/// account token, a redelivery, a JWT's header and claims) is refused when it names a member twice.
package enum JSONMemberNames {
    /// Whether the top-level object of valid JSON text names a member twice (after unescaping: `"sub"` and
    /// `"s\u0075b"` are the same name).
    ///
    /// - Parameter text: JSON text that decoded as an object.
    /// - Returns: `true` when a name occurs twice; `false` otherwise, and for text that is not an object.
    package static func hasDuplicate(_ text: [UInt8]) -> Bool {
        var seen: Set<String> = []
        var depth = 0
        var expectingName = false
        var index = 0
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "{"):
                depth += 1
                expectingName = depth == 1
            case UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                expectingName = depth == 1
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index += 1
                while index < text.count, text[index] != UInt8(ascii: "\"") {
                    escaped = escaped || text[index] == UInt8(ascii: "\\")
                    index += text[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < text.count else { return false }
                if depth == 1, expectingName {
                    expectingName = false
                    // A name without escapes is its bytes; only one with escapes needs unescaping.
                    let name: String
                    if escaped {
                        guard let unescaped = try? JSONDecoder().decode(String.self, from: Data(text[start...index]))
                        else { return false }
                        name = unescaped
                    } else {
                        name = String(decoding: text[(start + 1)..<index], as: UTF8.self)
                    }
                    guard seen.insert(name).inserted else { return true }
                }
            default:
                break
            }
            index += 1
        }
        return false
    }
}
