#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes the common shape of a transaction payload without `JSONDecoder`.
///
/// Verification decodes one transaction payload per token, and `JSONDecoder` costs about as much as a
/// quarter of the ECDSA verification itself. This decoder handles the shape the App Store actually
/// signs — one flat JSON object whose values are ASCII strings without escapes, integers, booleans or
/// `null` — and returns `nil` for anything else (escapes, non-ASCII, fractions, exponents, nested
/// objects or arrays, a key that appears twice, known or not, a value of the wrong type, trailing bytes,
/// malformed JSON). The caller then falls back to `JSONDecoder`, which stays the single authority on what is
/// valid and on the error to report; the verifier refuses a repeated key there (``JSONDuplicateKeys``), so a
/// repeated key is refused on either path and no reader ever picks one of its values. For every input it accepts, the result equals `JSONDecoder`'s (with
/// ``AppStoreJSON/makeDecoder()``); the tests and the fuzz target check that equivalence.
package enum FastTransactionDecoder {
    private typealias Value = JSONScanner.Value

    /// Decodes `bytes`, or returns `nil` to ask for the full decoder.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> TransactionPayload? {
        var scanner = JSONScanner(bytes)
        guard scanner.skipWhitespace(), let payload = decodeObject(from: &scanner), scanner.skipWhitespace(),
            scanner.isAtEnd
        else { return nil }
        return payload
    }

    /// Decodes `bytes` as ``decode(_:)`` does, and tells whether the object holds a key that is not a transaction
    /// field (which ``decode(_:)`` ignores).
    package static func decodeNotingUnknownKeys(
        _ bytes: UnsafeRawBufferPointer
    ) -> (payload: TransactionPayload, hasUnknownKeys: Bool)? {
        var scanner = JSONScanner(bytes)
        var unknownKeys = 0
        guard scanner.skipWhitespace(), let payload = decodeObject(from: &scanner, unknownKeys: &unknownKeys),
            scanner.skipWhitespace(), scanner.isAtEnd
        else { return nil }
        return (payload, unknownKeys > 0)
    }

    /// Decodes the object that starts at the scanner's position and leaves the scanner after it, or returns `nil`
    /// to ask for the full decoder: how the file store reads the transaction inside a ledger record.
    package static func decodeObject(from scanner: inout JSONScanner) -> TransactionPayload? {
        var unknownKeys = 0
        return decodeObject(from: &scanner, unknownKeys: &unknownKeys)
    }

    /// ``decodeObject(from:)``, counting in `unknownKeys` the keys that are not transaction fields.
    private static func decodeObject(from scanner: inout JSONScanner, unknownKeys: inout Int) -> TransactionPayload? {
        var payload = TransactionPayload()
        var seen: UInt64 = 0
        // Keys the decoder does not know, to refuse one that comes twice (rare: no allocation until the first).
        var unknown: [UnsafeRawBufferPointer] = []
        guard scanner.consume(UInt8(ascii: "{")), scanner.skipWhitespace() else { return nil }
        if scanner.consume(UInt8(ascii: "}")) {
            return payload
        }
        repeat {
            guard scanner.skipWhitespace(), let key = scanner.string() else { return nil }
            let field = Field.named(key)
            if let field {
                // A repeated key, known or not, is left to the full path, which refuses it.
                guard seen & (1 << field.rawValue) == 0 else { return nil }
                seen |= 1 << field.rawValue
            } else {
                guard !unknown.contains(where: { $0.elementsEqual(key) }) else { return nil }
                unknown.append(key)
                unknownKeys += 1
            }
            guard scanner.skipWhitespace(), scanner.consume(UInt8(ascii: ":")), scanner.skipWhitespace(),
                let value = scanner.value(), scanner.skipWhitespace()
            else { return nil }
            if let field {
                guard assign(value, to: field, in: &payload) else { return nil }
            }
        } while scanner.consume(UInt8(ascii: ","))
        return scanner.consume(UInt8(ascii: "}")) ? payload : nil
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

        private static let keys = JSONKeyTable(allCases.map { "\($0)" })

        /// The field whose JSON key is `bytes`.
        static func named(_ bytes: UnsafeRawBufferPointer) -> Field? {
            keys.index(of: bytes).flatMap(Field.init(rawValue:))
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
}
