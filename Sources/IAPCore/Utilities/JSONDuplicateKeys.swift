/// Finds a key that one JSON object holds twice, at any depth, comparing keys as the text they stand for.
///
/// JSON readers disagree on an object with a repeated key: `JSONDecoder` here keeps the first value, Python,
/// JavaScript, Go and Apple's own library keep the last. Two readers of one signed document must never see two
/// different values, so the verifier refuses such a document before any decoder reads it. Keys are compared
/// after their escapes are read (`"bundleId"` and `"bundle\u0049d"` are one key) and as Swift strings compare
/// (canonical equivalence), which is how `JSONDecoder` matches a key to a field.
///
/// The walk is iterative, so no nesting depth exhausts the stack, and reads the whole RFC 8259 grammar. When the
/// text is not strict JSON it answers ``Finding/malformed`` and leaves the diagnosis to the decoder that reads it
/// next.
package enum JSONDuplicateKeys {
    /// What the walk found.
    package enum Finding: Equatable, Sendable {
        /// Every object's keys are distinct.
        case unique
        /// `key` appears twice in the object at `path` (key names from the top, joined by `.`; array positions as
        /// `[n]`; empty for the top-level object).
        case duplicate(key: String, path: String)
        /// The text is not strict JSON (the walk stopped at the first byte it could not read).
        case malformed
    }

    /// One open object or array.
    private struct Frame {
        /// The keys of an object, `nil` for an array.
        var keys: Set<String>?
        /// Where this container sits in its parent, for the path.
        var location: String
        /// The next position in an array.
        var count = 0
    }

    /// Walks `bytes`, one JSON text.
    package static func find(in bytes: UnsafeRawBufferPointer) -> Finding {
        var reader = Reader(bytes: bytes)
        var stack: [Frame] = []
        // Where the value about to be read sits in its container.
        var location = ""
        while true {
            // A value.
            reader.skipWhitespace()
            guard let first = reader.peek() else { return .malformed }
            switch first {
            case UInt8(ascii: "{"):
                reader.index += 1
                stack.append(Frame(keys: [], location: location))
                reader.skipWhitespace()
                if reader.consume(UInt8(ascii: "}")) {
                    stack.removeLast()
                } else {
                    switch readMember(&reader, into: &stack) {
                    case .next(let key): location = key
                    case .finding(let finding): return finding
                    }
                    continue
                }
            case UInt8(ascii: "["):
                reader.index += 1
                stack.append(Frame(keys: nil, location: location))
                reader.skipWhitespace()
                if reader.consume(UInt8(ascii: "]")) {
                    stack.removeLast()
                } else {
                    location = "[0]"
                    stack[stack.count - 1].count = 1
                    continue
                }
            case UInt8(ascii: "\""):
                guard reader.skipString() else { return .malformed }
            case UInt8(ascii: "t"):
                guard reader.literal("true") else { return .malformed }
            case UInt8(ascii: "f"):
                guard reader.literal("false") else { return .malformed }
            case UInt8(ascii: "n"):
                guard reader.literal("null") else { return .malformed }
            default:
                guard reader.number() else { return .malformed }
            }
            // After a complete value: close containers until one continues with another value.
            while true {
                reader.skipWhitespace()
                guard let top = stack.last else {
                    return reader.index == reader.bytes.count ? .unique : .malformed
                }
                if reader.consume(UInt8(ascii: ",")) {
                    if top.keys != nil {
                        reader.skipWhitespace()
                        switch readMember(&reader, into: &stack) {
                        case .next(let key): location = key
                        case .finding(let finding): return finding
                        }
                    } else {
                        location = "[\(top.count)]"
                        stack[stack.count - 1].count += 1
                    }
                    break
                }
                let closing = top.keys == nil ? UInt8(ascii: "]") : UInt8(ascii: "}")
                guard reader.consume(closing) else { return .malformed }
                stack.removeLast()
            }
        }
    }

    private enum MemberStep {
        case next(String)
        case finding(Finding)
    }

    /// Reads `"key" :` of the innermost object and records the key; a repeated key is the finding.
    private static func readMember(_ reader: inout Reader, into stack: inout [Frame]) -> MemberStep {
        guard let key = reader.key() else { return .finding(.malformed) }
        let inserted = stack[stack.count - 1].keys?.insert(key).inserted ?? false
        guard inserted else {
            let path = stack.dropFirst().map(\.location).reduce("") { path, component in
                component.hasPrefix("[") || path.isEmpty ? path + component : path + "." + component
            }
            return .finding(.duplicate(key: key, path: path))
        }
        reader.skipWhitespace()
        guard reader.consume(UInt8(ascii: ":")) else { return .finding(.malformed) }
        return .next(key)
    }

    /// A cursor over the bytes that reads JSON tokens, each whole or not at all.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        func peek() -> UInt8? {
            index < bytes.count ? bytes[index] : nil
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let matches = word.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            guard matches else { return false }
            index += count
            return true
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() -> Bool {
            _ = consume(UInt8(ascii: "-"))
            if consume(UInt8(ascii: "0")) {
                // No digit may follow a leading zero.
            } else if digits() == 0 {
                return false
            }
            if consume(UInt8(ascii: ".")), digits() == 0 {
                return false
            }
            if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
                _ = consume(UInt8(ascii: "+")) || consume(UInt8(ascii: "-"))
                if digits() == 0 {
                    return false
                }
            }
            return true
        }

        private mutating func digits() -> Int {
            let start = index
            while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                index += 1
            }
            return index - start
        }

        /// Skips a string value, checking its escapes.
        mutating func skipString() -> Bool {
            string(collecting: false) != nil
        }

        /// An object key, its escapes read.
        mutating func key() -> String? {
            string(collecting: true)
        }

        /// Reads a string; returns its text when `collecting` (else an empty string), `nil` when malformed.
        private mutating func string(collecting: Bool) -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = index
            var escaped = false
            // The common case, a key without escapes, is read as one slice.
            while let byte = peek(), byte != UInt8(ascii: "\"") {
                guard byte >= 0x20 else { return nil }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    break
                }
                index += 1
            }
            if !escaped {
                guard consume(UInt8(ascii: "\"")) else { return nil }
                guard collecting else { return "" }
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
            }
            var text: [UInt8] = collecting ? Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index])) : []
            while let byte = peek() {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return collecting ? String(decoding: text, as: UTF8.self) : ""
                case UInt8(ascii: "\\"):
                    guard let escape = peek() else { return nil }
                    index += 1
                    let simple: UInt8? =
                        switch escape {
                        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape
                        case UInt8(ascii: "b"): 0x08
                        case UInt8(ascii: "f"): 0x0C
                        case UInt8(ascii: "n"): 0x0A
                        case UInt8(ascii: "r"): 0x0D
                        case UInt8(ascii: "t"): 0x09
                        default: nil
                        }
                    if let simple {
                        text.append(simple)
                        continue
                    }
                    guard escape == UInt8(ascii: "u"), let scalar = unicodeEscape() else { return nil }
                    if collecting {
                        UTF8.encode(scalar) { text.append($0) }
                    }
                case 0..<0x20:
                    return nil
                default:
                    if collecting {
                        text.append(byte)
                    }
                }
            }
            return nil
        }

        /// The scalar of `XXXX` after `\u` (and of a following `\uXXXX` low surrogate); `nil` for a lone surrogate.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            switch high {
            case 0xD800..<0xDC00:
                guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")), let low = hex4(),
                    (0xDC00..<0xE000).contains(low)
                else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00..<0xE000:
                return nil
            default:
                return Unicode.Scalar(high)
            }
        }

        private mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}
