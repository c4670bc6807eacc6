#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes App Store payloads as JSON without `JSONEncoder`: byte for byte what ``AppStoreJSON/makeEncoder()``
/// writes for the same value.
///
/// `iap verify --batch` prints one payload per token, and building the output with `JSONEncoder` (which boxes every
/// value and sorts every object's keys) cost several times a signature verification. This writer knows each
/// payload's fields, with Apple's names, already in `JSONEncoder`'s sorted order (by their UTF-8 bytes, so `SKU`
/// comes before `description`), and writes what is present:
///
/// - strings with `JSONEncoder`'s escapes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
///   `\u00XX` (lower-case hex), everything else, `/` and non-ASCII included, as it is;
/// - integers in decimal, booleans as `true` / `false`, open enumerations as their raw value;
/// - dates as whole milliseconds since 1970 rounded to the nearest, as ``AppStoreJSON`` does; a date beyond what
///   64 bits of milliseconds hold throws `EncodingError.invalidValue`, as `JSONEncoder` does;
/// - absent optionals left out, nested objects and arrays in the same rules.
///
/// Tests compare it with `JSONEncoder` over many generated payloads. A field added to a payload type must be added
/// here too; the tests fail until it is.
public struct AppStoreJSONWriter {
    /// The JSON written so far.
    public var bytes: [UInt8]
    /// The largest magnitude of a date written, in milliseconds since 1970, or `nil` for what 64 bits hold; a date
    /// beyond it throws as one beyond 64 bits does. A ledger record sets ``AppStoreJSON/maximumMilliseconds``: it
    /// keeps only dates its readers read back.
    package var dateLimit: Int64?
    /// Whether the object being written already holds a member (the next one needs a comma).
    private var needsComma = false

    /// Creates a writer with room for `capacity` bytes.
    public init(capacity: Int = 1_024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends text as it is: JSON punctuation or a value written elsewhere.
    public mutating func appendRaw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends a JSON string literal with `JSONEncoder`'s escapes (slashes not escaped).
    public mutating func appendString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
            bytes.append(UInt8(ascii: "\""))
        }
    }

    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                bytes.append(contentsOf: [
                    UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), digits[Int(byte >> 4)],
                    digits[Int(byte & 0x0F)],
                ])
            }
        }
    }

    /// Appends an integer in decimal, without building a `String`.
    public mutating func appendInteger(_ value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
        }
        var magnitude = value.magnitude
        // 20 digits hold UInt64.max; written from the right.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    // MARK: - Objects

    /// Appends an object whose members `body` writes.
    mutating func members(_ body: (inout AppStoreJSONWriter) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        let outer = needsComma
        needsComma = false
        try body(&self)
        needsComma = outer
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `"name":` (after a comma unless it is the object's first member).
    mutating func key(_ name: StaticString) {
        if needsComma {
            bytes.append(UInt8(ascii: ","))
        }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        appendString(value)
    }

    mutating func field(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        appendInteger(value)
    }

    mutating func field(_ name: StaticString, _ value: Int32?) {
        field(name, value.map(Int64.init))
    }

    mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        if value {
            appendRaw("true")
        } else {
            appendRaw("false")
        }
    }

    mutating func field(_ name: StaticString, _ value: Date?) throws {
        guard let value else { return }
        guard let milliseconds = AppStoreJSON.encodedMilliseconds(value),
            dateLimit.map({ milliseconds.magnitude <= $0.magnitude }) ?? true
        else {
            throw AppStoreJSON.unencodableDate(value, codingPath: [])
        }
        key(name)
        appendInteger(milliseconds)
    }

    mutating func field<Value: OpenEnumeration>(_ name: StaticString, _ value: Value?) where Value.RawValue == String {
        field(name, value?.rawValue)
    }

    mutating func field<Value: OpenEnumeration>(_ name: StaticString, _ value: Value?) where Value.RawValue == Int32 {
        field(name, value?.rawValue)
    }

    mutating func field(_ name: StaticString, _ values: [String]?) {
        guard let values else { return }
        key(name)
        elements(values) { $0.appendString($1) }
    }

    /// Appends `"name":{...}` when `value` is present, its members written by `write`.
    mutating func object<Value>(
        _ name: StaticString,
        _ value: Value?,
        _ write: (inout AppStoreJSONWriter, Value) throws -> Void
    ) rethrows {
        guard let value else { return }
        key(name)
        try members { try write(&$0, value) }
    }

    /// Appends `"name":[{...},...]` when `values` is present, each element's members written by `write`.
    mutating func array<Value>(
        _ name: StaticString,
        _ values: [Value]?,
        _ write: (inout AppStoreJSONWriter, Value) throws -> Void
    ) rethrows {
        guard let values else { return }
        key(name)
        try elements(values) { out, value in
            try out.members { try write(&$0, value) }
        }
    }

    /// Appends `[...]`, each element written by `write`.
    private mutating func elements<Value>(
        _ values: [Value],
        _ write: (inout AppStoreJSONWriter, Value) throws -> Void
    ) rethrows {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 {
                bytes.append(UInt8(ascii: ","))
            }
            try write(&self, value)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
