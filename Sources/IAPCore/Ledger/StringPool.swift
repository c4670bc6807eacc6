/// Strings of a ledger held once each: every distinct value (by its bytes, as ``UserKey`` compares user ids) is
/// stored one time and named by a number, so that a million entries naming the same product, bundle id or
/// storefront hold four bytes each instead of a string each.
///
/// Number 0 stands for `nil`. A pool only grows: a value stays after the entry that brought it is undone, which
/// costs a few bytes and keeps every number valid.
package struct StringPool: Sendable {
    /// The values, at their number (index 0 is the unused `nil` slot).
    private var strings: [String] = [""]
    /// Value → its number.
    private var numbers: [UserKey: UInt32] = [:]

    /// An empty pool.
    package init() {}

    /// How many values the pool holds.
    package var count: Int { strings.count - 1 }

    /// The number each field slot got last (see ``intern(_:slot:)``).
    private var recent = [UInt32](repeating: 0, count: slots)
    /// How many field slots ``intern(_:slot:)`` remembers.
    package static let slots = 16

    /// The number of `value`, added to the pool if it is new; 0 for `nil`.
    ///
    /// - Parameters:
    ///   - value: The string.
    ///   - slot: Which field the value is of (below ``slots``): a field that holds the same value as last time (one
    ///     product, one bundle id, one storefront across a whole ledger) is answered by a comparison of bytes, without
    ///     hashing.
    package mutating func intern(_ value: String?, slot: Int) -> UInt32 {
        guard let value else {
            return 0
        }
        let last = recent[slot]
        if last != 0, strings[Int(last)].isSameUser(as: value) {
            return last
        }
        let number = intern(value)
        recent[slot] = number
        return number
    }

    /// The number of `value`, added to the pool if it is new.
    private mutating func intern(_ value: String) -> UInt32 {
        let key = UserKey(value)
        if let number = numbers[key] {
            return number
        }
        let number = UInt32(strings.count)
        strings.append(value)
        numbers[key] = number
        return number
    }

    /// The number of `value` if the pool holds it.
    package func number(of value: String) -> UInt32? {
        numbers[UserKey(value)]
    }

    /// The value of a number the pool gave (`nil` for 0).
    package subscript(number: UInt32) -> String? {
        number == 0 ? nil : strings[Int(number)]
    }
}

/// A transaction id in eight bytes: a canonical decimal number (what the App Store issues) is kept as its value,
/// anything else as a number of a ``StringPool``.
///
/// The raw value is 0 for `nil`, the number plus one for a decimal id (no sign, no leading zero, below 2^63 - 1),
/// and 2^63 + the pool's number for any other id; so two ids are equal exactly when their bytes are.
package struct PackedID: Hashable, Sendable {
    package let raw: UInt64

    private static let textTag: UInt64 = 1 << 63

    private init(raw: UInt64) {
        self.raw = raw
    }

    /// `nil`.
    package static let none = PackedID(raw: 0)

    /// Packs an id, adding it to `pool` when it is not a canonical decimal number.
    package init(_ id: String?, pool: inout StringPool) {
        guard let id else {
            self = .none
            return
        }
        if let value = Self.decimal(id) {
            self.init(raw: value + 1)
        } else {
            self.init(raw: Self.textTag | UInt64(pool.intern(id, slot: 0)))
        }
    }

    /// The packed form of an id already in the ledger, or `nil` when the ledger cannot hold it (a text id the pool
    /// does not know).
    package static func existing(_ id: String, in pool: StringPool) -> PackedID? {
        if let value = decimal(id) {
            return PackedID(raw: value + 1)
        }
        return pool.number(of: id).map { PackedID(raw: textTag | UInt64($0)) }
    }

    /// The id (`nil` for ``none``).
    package func unpacked(_ pool: StringPool) -> String? {
        switch raw {
        case 0: nil
        case ..<Self.textTag: String(raw - 1)
        default: pool[UInt32(truncatingIfNeeded: raw & ~Self.textTag)]
        }
    }

    /// The value of a canonical decimal id (ASCII digits, no leading zero but for "0", below 2^63 - 1), else `nil`.
    private static func decimal(_ id: String) -> UInt64? {
        var id = id
        return id.withUTF8 { bytes -> UInt64? in
            guard (1...19).contains(bytes.count), bytes[0] != UInt8(ascii: "0") || bytes.count == 1 else {
                return nil
            }
            var value: UInt64 = 0
            for byte in bytes {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                    return nil
                }
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                guard !overflow else {
                    return nil
                }
                value = product + UInt64(byte - UInt8(ascii: "0"))
            }
            return value < textTag - 1 ? value : nil
        }
    }
}
