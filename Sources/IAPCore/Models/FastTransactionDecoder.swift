#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decodes the common shape of a transaction payload without `JSONDecoder`.
///
/// Verification decodes one transaction payload per token, and `JSONDecoder` costs about as much as a
/// quarter of the ECDSA verification itself. This decoder handles the shape the App Store actually
/// signs — one flat JSON object whose values are ASCII strings without escapes, integers, booleans or
/// `null` — and returns `nil` for anything else (escapes, non-ASCII, fractions, exponents, nested
/// objects or arrays, duplicate keys, a value of the wrong type, trailing bytes, malformed JSON). The
/// caller then falls back to `JSONDecoder`, which stays the single authority on what is valid and on the
/// error to report. For every input it accepts, the result equals `JSONDecoder`'s (with
/// ``AppStoreJSON/makeDecoder()``); the tests and the fuzz target check that equivalence.
package enum FastTransactionDecoder {
    private enum Value {
        case string(UnsafeRawBufferPointer)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// Decodes `bytes`, or returns `nil` to ask for the full decoder.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> TransactionPayload? {
        var parser = Parser(bytes)
        var payload = TransactionPayload()
        var seen: UInt64 = 0
        guard parser.skipWhitespace(), parser.consume(UInt8(ascii: "{")) else { return nil }
        guard parser.skipWhitespace() else { return nil }
        if parser.consume(UInt8(ascii: "}")) {
            return parser.atEndAfterWhitespace() ? payload : nil
        }
        while true {
            guard parser.skipWhitespace(), let keyBytes = parser.string() else { return nil }
            let field = Field.named(keyBytes)
            if let field {
                // A repeated field is left to the full decoder; unknown keys are ignored, repeated or not.
                guard seen & (1 << field.rawValue) == 0 else { return nil }
                seen |= 1 << field.rawValue
            }
            guard parser.skipWhitespace(), parser.consume(UInt8(ascii: ":")), parser.skipWhitespace() else {
                return nil
            }
            guard let value = parser.value() else { return nil }
            if let field {
                guard assign(value, to: field, in: &payload) else { return nil }
            }
            guard parser.skipWhitespace() else { return nil }
            if parser.consume(UInt8(ascii: ",")) {
                continue
            }
            guard parser.consume(UInt8(ascii: "}")) else { return nil }
            return parser.atEndAfterWhitespace() ? payload : nil
        }
    }

    // MARK: - Fields

    /// The payload's keys, found by their bytes without building a `String` or hashing.
    private enum Field: Int, CaseIterable {
        case originalTransactionId
        case transactionId
        case webOrderLineItemId
        case bundleId
        case productId
        case subscriptionGroupIdentifier
        case purchaseDate
        case originalPurchaseDate
        case expiresDate
        case quantity
        case type
        case appAccountToken
        case inAppOwnershipType
        case signedDate
        case revocationReason
        case revocationDate
        case isUpgraded
        case offerType
        case offerIdentifier
        case environment
        case storefront
        case storefrontId
        case transactionReason
        case currency
        case price
        case offerDiscountType
        case appTransactionId
        case offerPeriod
        case revocationType
        case revocationPercentage
        case billingPlanType
        case advancedCommerceInfo
        case commitmentInfo

        /// The fields by key length, with their names as bytes.
        private static let byLength: [[(name: [UInt8], field: Field)]] = {
            var table = [[(name: [UInt8], field: Field)]](repeating: [], count: 64)
            for field in allCases {
                let name = Array("\(field)".utf8)
                table[name.count].append((name, field))
            }
            return table
        }()

        static func named(_ key: UnsafeRawBufferPointer) -> Field? {
            guard key.count > 0, key.count < byLength.count, let keyBase = key.baseAddress else { return nil }
            for candidate in byLength[key.count] {
                let matches = candidate.name.withUnsafeBytes { name in
                    name.baseAddress.map { memcmp($0, keyBase, key.count) == 0 } ?? false
                }
                if matches {
                    return candidate.field
                }
            }
            return nil
        }
    }

    private static func assign(_ value: Value, to field: Field, in payload: inout TransactionPayload) -> Bool {
        switch field {
        case .originalTransactionId: return string(value, into: &payload.originalTransactionId)
        case .transactionId: return string(value, into: &payload.transactionId)
        case .webOrderLineItemId: return string(value, into: &payload.webOrderLineItemId)
        case .bundleId: return string(value, into: &payload.bundleId)
        case .productId: return string(value, into: &payload.productId)
        case .subscriptionGroupIdentifier: return string(value, into: &payload.subscriptionGroupIdentifier)
        case .purchaseDate: return date(value, into: &payload.purchaseDate)
        case .originalPurchaseDate: return date(value, into: &payload.originalPurchaseDate)
        case .expiresDate: return date(value, into: &payload.expiresDate)
        case .quantity: return int32(value, into: &payload.quantity)
        case .type: return enumeration(value, into: &payload.type)
        case .appAccountToken: return string(value, into: &payload.appAccountToken)
        case .inAppOwnershipType: return enumeration(value, into: &payload.inAppOwnershipType)
        case .signedDate: return date(value, into: &payload.signedDate)
        case .revocationReason: return integerEnumeration(value, into: &payload.revocationReason)
        case .revocationDate: return date(value, into: &payload.revocationDate)
        case .isUpgraded: return bool(value, into: &payload.isUpgraded)
        case .offerType: return integerEnumeration(value, into: &payload.offerType)
        case .offerIdentifier: return string(value, into: &payload.offerIdentifier)
        case .environment: return enumeration(value, into: &payload.environment)
        case .storefront: return string(value, into: &payload.storefront)
        case .storefrontId: return string(value, into: &payload.storefrontId)
        case .transactionReason: return enumeration(value, into: &payload.transactionReason)
        case .currency: return string(value, into: &payload.currency)
        case .price: return int64(value, into: &payload.price)
        case .offerDiscountType: return enumeration(value, into: &payload.offerDiscountType)
        case .appTransactionId: return string(value, into: &payload.appTransactionId)
        case .offerPeriod: return string(value, into: &payload.offerPeriod)
        case .revocationType: return enumeration(value, into: &payload.revocationType)
        case .revocationPercentage: return int32(value, into: &payload.revocationPercentage)
        case .billingPlanType: return enumeration(value, into: &payload.billingPlanType)
        case .advancedCommerceInfo, .commitmentInfo:
            // Objects are left to the full decoder; an explicit null is simply absent.
            if case .null = value { return true }
            return false
        }
    }

    /// Sets a field from a value: `null` clears it, a value `convert` accepts sets it, anything else is a
    /// type mismatch that the full decoder must report.
    private static func assign<T>(_ value: Value, into field: inout T?, _ convert: (Value) -> T?) -> Bool {
        if case .null = value {
            field = nil
            return true
        }
        guard let converted = convert(value) else { return false }
        field = converted
        return true
    }

    private static func string(_ value: Value, into field: inout String?) -> Bool {
        assign(value, into: &field) {
            if case .string(let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil }
        }
    }

    private static func enumeration<E: OpenEnumeration>(_ value: Value, into field: inout E?) -> Bool
    where E.RawValue == String {
        assign(value, into: &field) {
            if case .string(let bytes) = $0 { E(rawValue: String(decoding: bytes, as: UTF8.self)) } else { nil }
        }
    }

    private static func integerEnumeration<E: OpenEnumeration>(_ value: Value, into field: inout E?) -> Bool
    where E.RawValue == Int32 {
        assign(value, into: &field) {
            if case .integer(let number) = $0 { Int32(exactly: number).map(E.init(rawValue:)) } else { nil }
        }
    }

    private static func int32(_ value: Value, into field: inout Int32?) -> Bool {
        assign(value, into: &field) { if case .integer(let number) = $0 { Int32(exactly: number) } else { nil } }
    }

    private static func int64(_ value: Value, into field: inout Int64?) -> Bool {
        assign(value, into: &field) { if case .integer(let number) = $0 { number } else { nil } }
    }

    private static func bool(_ value: Value, into field: inout Bool?) -> Bool {
        assign(value, into: &field) { if case .bool(let flag) = $0 { flag } else { nil } }
    }

    private static func date(_ value: Value, into field: inout Date?) -> Bool {
        assign(value, into: &field) {
            guard case .integer(let milliseconds) = $0,
                milliseconds.magnitude <= UInt64(AppStoreJSON.maximumMilliseconds)
            else { return nil }
            return Date(millisecondsSince1970: milliseconds)
        }
    }

    // MARK: - Scanning

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        /// Skips JSON white space; always `true`, so it chains in `guard` conditions.
        mutating func skipWhitespace() -> Bool {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return true
                }
            }
            return true
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func atEndAfterWhitespace() -> Bool {
            _ = skipWhitespace()
            return index == bytes.count
        }

        /// A string of printable ASCII without escapes; `nil` for anything else.
        mutating func string() -> UnsafeRawBufferPointer? {
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

        mutating func value() -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return string().map(Value.string)
            case UInt8(ascii: "t"):
                return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"):
                return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"):
                return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return integer().map(Value.integer)
            default:
                return nil
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let matches = word.withUTF8Buffer { expected in
                (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            guard matches else { return false }
            index += count
            return terminatesValue(at: index + 0)
        }

        /// A JSON integer (no fraction, no exponent, no leading zeros) that fits in Int64.
        private mutating func integer() -> Int64? {
            var negative = false
            if bytes[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let start = index
            var magnitude: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let digit = UInt64(bytes[index] - UInt8(ascii: "0"))
                let (shifted, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, carried) = shifted.addingReportingOverflow(digit)
                guard !overflowed, !carried else { return nil }
                magnitude = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
            guard terminatesValue(at: index) else { return nil }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return Int64(magnitude)
        }

        /// Whether a scalar ends here: at white space, `,`, `}` or the end (not `.`, `e`, a letter, ...).
        private func terminatesValue(at position: Int) -> Bool {
            guard position < bytes.count else { return true }
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "}"): return true
            default: return false
            }
        }
    }
}
