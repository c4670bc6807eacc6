#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A forward reader of the plain JSON that the fast decoders take: ASCII strings without escapes, integers,
/// booleans and `null`.
///
/// It is the one scanner of the package's fast paths (the verifier's transaction decoder, and the file store's record
/// decoder). Each read either consumes exactly one well-formed token and returns it, or returns `nil`/`false`;
/// after a refusal the caller gives up and hands the whole input to `JSONDecoder`, which stays the authority on
/// what is valid and on the error to report. It never reads outside its buffer.
public struct JSONScanner {
    /// One scalar value.
    public enum Value {
        /// A string's bytes, without the quotes (printable ASCII, no escapes).
        case string(UnsafeRawBufferPointer)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// The bytes read.
    public let bytes: UnsafeRawBufferPointer
    /// The position of the next byte to read.
    public var index = 0

    /// Creates a scanner at the start of `bytes`, which must outlive it.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether every byte was read.
    @inlinable
    public var isAtEnd: Bool { index == bytes.count }

    /// Skips JSON white space; always `true`, so that it chains in `guard` conditions.
    @inlinable
    public mutating func skipWhitespace() -> Bool {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return true
            }
        }
        return true
    }

    /// Reads `byte` if it comes next.
    @inlinable
    public mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// A string of printable ASCII without escapes, as its bytes without the quotes; `nil` for anything else.
    @inlinable
    public mutating func string() -> UnsafeRawBufferPointer? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return slice
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// A string, as a `String`.
    @inlinable
    public mutating func text() -> String? {
        string().map { String(decoding: $0, as: UTF8.self) }
    }

    /// `true`, `false` or `null`, followed by the end of the value.
    @inlinable
    public mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches, terminatesValue(at: index + count) else { return false }
        index += count
        return true
    }

    /// A boolean.
    @inlinable
    public mutating func bool() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// A JSON integer (no fraction, no exponent, no leading zeros) that fits in `Int64`.
    @inlinable
    public mutating func integer() -> Int64? {
        let start = index
        let negative = consume(UInt8(ascii: "-"))
        let digitsStart = index
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (shifted, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carried) = shifted.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            magnitude = sum
            index += 1
        }
        let digits = index - digitsStart
        let limit = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
        guard digits > 0, !(digits > 1 && bytes[digitsStart] == UInt8(ascii: "0")), magnitude <= limit,
            terminatesValue(at: index)
        else {
            index = start
            return nil
        }
        return negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)
    }

    /// `null` as `.some(nil)`, else what `read` reads, else `nil`: the value of an optional field.
    @inlinable
    public mutating func optional<Wrapped>(_ read: (inout JSONScanner) -> Wrapped?) -> Wrapped?? {
        if literal("null") { return .some(nil) }
        return read(&self).map { .some($0) }
    }

    /// Any scalar value.
    @inlinable
    public mutating func value() -> Value? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return bool().map(Value.bool)
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer().map(Value.integer)
        default: return nil
        }
    }

    /// Whether a scalar ends here: at white space, `,`, `}` or the end (not at `.`, `e`, a letter, ...).
    @inlinable
    public func terminatesValue(at position: Int) -> Bool {
        guard position < bytes.count else { return true }
        switch bytes[position] {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "}"): return true
        default: return false
        }
    }
}

/// The keys of a JSON object that a fast decoder knows, found by their bytes without building a `String` or
/// hashing: `index(of:)` gives the position of the key in the list the table was made from.
///
/// Every name lives in one byte array, and the names of one length sit next to each other, so a lookup compares
/// a few candidates with `memcmp` and retains nothing.
public struct JSONKeyTable: Sendable {
    /// Where a name starts in ``names``, and its position in the list.
    private struct Slot: Sendable {
        let offset: Int
        let index: Int
    }

    /// Every name, one after the other.
    private let names: [UInt8]
    /// The names, by length.
    private let slots: [Slot]
    /// The slots of the names of length `n` are `slots[firstSlot[n]..<firstSlot[n + 1]]`.
    private let firstSlot: [Int]

    /// Creates the table of `keys`, whose positions ``index(of:)`` gives.
    public init(_ keys: [String]) {
        let longest = keys.map(\.utf8.count).max() ?? 0
        var names: [UInt8] = []
        var slots: [Slot] = []
        var firstSlot: [Int] = []
        for length in 0...longest {
            firstSlot.append(slots.count)
            for (index, key) in keys.enumerated() where key.utf8.count == length {
                slots.append(Slot(offset: names.count, index: index))
                names += key.utf8
            }
        }
        firstSlot.append(slots.count)
        self.names = names
        self.slots = slots
        self.firstSlot = firstSlot
    }

    /// The position of the key whose name is `bytes`, or `nil`.
    public func index(of bytes: UnsafeRawBufferPointer) -> Int? {
        let length = bytes.count
        guard length > 0, length + 1 < firstSlot.count, let key = bytes.baseAddress else { return nil }
        let candidates = firstSlot[length]..<firstSlot[length + 1]
        return names.withUnsafeBytes { names -> Int? in
            guard let base = names.baseAddress else { return nil }
            return slots.withUnsafeBufferPointer { slots -> Int? in
                for slot in slots[candidates] where memcmp(base + slot.offset, key, length) == 0 {
                    return slot.index
                }
                return nil
            }
        }
    }
}
