#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Decodes the common shape of an entry record (`insert`, `replace`, `entry`) without `JSONDecoder`.
///
/// Opening a store decodes every entry once, and `JSONDecoder` costs about 20 µs per entry, which is
/// 20 s for a million. This decoder reads the shape the store itself writes — no white space, ASCII
/// strings without escapes, integer numbers, the transaction as one flat object — and returns `nil` for
/// anything else (an escape, a non-ASCII byte, a fraction, an unknown delivery state, a missing or
/// repeated key, ...). The caller then falls back to `JSONDecoder`, which stays the authority on what is
/// valid and on the error to report. For every input it accepts, the result equals `JSONDecoder`'s; the
/// tests check that equivalence.
enum FastRecordDecoder {
    /// Decodes an operation, or returns `nil` to ask for `JSONDecoder`.
    static func decode(_ body: UnsafeRawBufferPointer) -> JournalOperation? {
        var parser = Parser(bytes: body)
        guard parser.consume(UInt8(ascii: "{")), let kind = parser.string(), parser.consume(UInt8(ascii: ":")) else {
            return nil
        }
        let operation: JournalOperation
        switch kind.count {
        case 5 where equals(kind, "entry"):
            guard let entry = parser.ledgerEntry() else { return nil }
            operation = .entry(entry)
        case 6 where equals(kind, "insert"):
            guard let entry = parser.ledgerEntry() else { return nil }
            operation = .insert(entry)
        case 7 where equals(kind, "replace"):
            guard let entry = parser.ledgerEntry() else { return nil }
            operation = .replace(entry)
        default:
            return nil
        }
        guard parser.consume(UInt8(ascii: "}")), parser.index == body.count else {
            return nil
        }
        return operation
    }

    private static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        text.withUTF8Buffer { expected in
            expected.count == bytes.count && (0..<bytes.count).allSatisfy { bytes[$0] == expected[$0] }
        }
    }

    /// The keys of a ledger entry, as its synthesized `Codable` conformance names them.
    private enum Field: Int, CaseIterable {
        case transactionId, originalTransactionId, userId, productId, transaction, orderId, deliveryState
        case deliveryAttempts, nextAttemptAt, lastError, recordedAt, deliveredAt, revokedAt
        case revocationDelivered, grantGeneration, sequence, revision, grantAttempted, grantedUnits

        /// The fields by key length, with their names as bytes: found without building a `String` or hashing.
        private static let byLength: [[(name: [UInt8], field: Field)]] = {
            var table = [[(name: [UInt8], field: Field)]](repeating: [], count: 64)
            for field in allCases {
                let name = Array("\(field)".utf8)
                table[name.count].append((name, field))
            }
            return table
        }()

        static func named(_ key: UnsafeRawBufferPointer) -> Field? {
            guard key.count > 0, key.count < byLength.count else { return nil }
            return byLength[key.count].first { candidate in
                candidate.name.elementsEqual(key)
            }?.field
        }

        /// The fields a record may leave out.
        static let optionalMask: Int = [
            Field.orderId, .lastError, .nextAttemptAt, .deliveredAt, .revokedAt, .grantAttempted, .grantedUnits,
        ].reduce(0) { $0 | 1 << $1.rawValue }

        /// Every field.
        static let allMask: Int = allCases.reduce(0) { $0 | 1 << $1.rawValue }
    }

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string of printable ASCII without escapes.
        mutating func string() -> UnsafeRawBufferPointer? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return UnsafeRawBufferPointer(rebasing: bytes[start..<(index - 1)])
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        mutating func text() -> String? {
            string().map { String(decoding: $0, as: UTF8.self) }
        }

        mutating func optionalText() -> String?? {
            if literal("null") { return .some(nil) }
            return text().map { .some($0) }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let matches = word.withUTF8Buffer { expected in
                (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
            }
            if matches { index += count }
            return matches
        }

        /// A JSON integer without fraction, exponent or leading zeros that fits in Int64.
        mutating func integer() -> Int64? {
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let start = index
            var magnitude: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, carry) = shifted.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                magnitude = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") || bytes[index] == UInt8(ascii: "}") else {
                return nil
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) else { return nil }
                return -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return Int64(magnitude)
        }

        mutating func date() -> Date? {
            guard let milliseconds = integer(), milliseconds.magnitude <= UInt64(AppStoreJSON.maximumMilliseconds)
            else { return nil }
            return Date(millisecondsSince1970: milliseconds)
        }

        mutating func optionalDate() -> Date?? {
            if literal("null") { return .some(nil) }
            return date().map { .some($0) }
        }

        mutating func bool() -> Bool? {
            if literal("true") { return true }
            if literal("false") { return false }
            return nil
        }

        /// The bytes of a flat object (strings may not hold braces, escapes are refused), braces included.
        mutating func flatObject() -> UnsafeRawBufferPointer? {
            let start = index
            guard consume(UInt8(ascii: "{")) else { return nil }
            var inString = false
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if inString {
                    if byte == UInt8(ascii: "\"") { inString = false }
                    if byte == UInt8(ascii: "\\") { return nil }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    return nil
                } else if byte == UInt8(ascii: "}") {
                    return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                }
            }
            return nil
        }

        mutating func ledgerEntry() -> LedgerEntry? {
            guard consume(UInt8(ascii: "{")) else { return nil }
            var seen = 0
            var transactionId = ""
            var originalTransactionId = ""
            var userId = ""
            var productId = ""
            var transaction: TransactionPayload?
            var orderId: String?
            var lastError: String?
            var deliveryState = DeliveryState.pending
            var deliveryAttempts = 0
            var grantGeneration = 0
            var nextAttemptAt: Date?
            var deliveredAt: Date?
            var revokedAt: Date?
            var recordedAt = Date(millisecondsSince1970: 0)
            var revocationDelivered = false
            var grantAttempted = false
            var grantedUnits: Int64?
            var sequence: Int64 = 0
            var revision: Int64 = 0
            if consume(UInt8(ascii: "}")) { return nil }
            repeat {
                guard let key = string(), consume(UInt8(ascii: ":")) else { return nil }
                // Unknown keys are left to JSONDecoder (which would ignore them); so are repeated ones.
                guard let field = Field.named(key), seen & (1 << field.rawValue) == 0 else { return nil }
                seen |= 1 << field.rawValue
                switch field {
                case .transactionId:
                    guard let value = text() else { return nil }
                    transactionId = value
                case .originalTransactionId:
                    guard let value = text() else { return nil }
                    originalTransactionId = value
                case .userId:
                    guard let value = text() else { return nil }
                    userId = value
                case .productId:
                    guard let value = text() else { return nil }
                    productId = value
                case .transaction:
                    guard let object = flatObject(), let payload = FastTransactionDecoder.decode(object) else {
                        return nil
                    }
                    transaction = payload
                case .orderId:
                    guard let value = optionalText() else { return nil }
                    orderId = value
                case .lastError:
                    guard let value = optionalText() else { return nil }
                    lastError = value
                case .deliveryState:
                    guard let raw = text(), let state = DeliveryState(rawValue: raw) else { return nil }
                    deliveryState = state
                case .deliveryAttempts:
                    guard let value = integer(), let narrow = Int(exactly: value) else { return nil }
                    deliveryAttempts = narrow
                case .grantGeneration:
                    guard let value = integer(), let narrow = Int(exactly: value) else { return nil }
                    grantGeneration = narrow
                case .nextAttemptAt:
                    guard let value = optionalDate() else { return nil }
                    nextAttemptAt = value
                case .deliveredAt:
                    guard let value = optionalDate() else { return nil }
                    deliveredAt = value
                case .revokedAt:
                    guard let value = optionalDate() else { return nil }
                    revokedAt = value
                case .recordedAt:
                    guard let value = date() else { return nil }
                    recordedAt = value
                case .revocationDelivered:
                    guard let value = bool() else { return nil }
                    revocationDelivered = value
                case .grantAttempted:
                    guard let value = bool() else { return nil }
                    grantAttempted = value
                case .grantedUnits:
                    guard let value = integer() else { return nil }
                    grantedUnits = value
                case .sequence:
                    guard let value = integer() else { return nil }
                    sequence = value
                case .revision:
                    guard let value = integer() else { return nil }
                    revision = value
                }
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "}")), var transaction else { return nil }
            // The payload repeats the entry's ids: share one string instead of keeping two copies.
            if transaction.transactionId == transactionId {
                transaction.transactionId = transactionId
            }
            if transaction.originalTransactionId == originalTransactionId {
                transaction.originalTransactionId = originalTransactionId
            }
            if transaction.productId == productId {
                transaction.productId = productId
            }
            let required = Field.allMask & ~Field.optionalMask
            guard seen & required == required else {
                return nil
            }
            var entry = LedgerEntry(
                transaction: transaction,
                transactionId: transactionId,
                originalTransactionId: originalTransactionId,
                userId: userId,
                productId: productId,
                orderId: orderId,
                recordedAt: recordedAt
            )
            entry.deliveryState = deliveryState
            entry.deliveryAttempts = deliveryAttempts
            entry.nextAttemptAt = nextAttemptAt
            entry.lastError = lastError
            entry.deliveredAt = deliveredAt
            entry.revokedAt = revokedAt
            entry.revocationDelivered = revocationDelivered
            entry.grantGeneration = grantGeneration
            // As LedgerEntry's own decoder: a ledger written before `grantAttempted` existed granted what it delivered.
            entry.grantAttempted =
                seen & (1 << Field.grantAttempted.rawValue) != 0 ? grantAttempted : deliveredAt != nil
            entry.grantedUnits = grantedUnits
            entry.sequence = sequence
            entry.revision = revision
            return entry
        }
    }
}
