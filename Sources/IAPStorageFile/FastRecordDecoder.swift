#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Decodes the common shape of an entry record (`insert`, `replace`, `entry`) without `JSONDecoder`.
///
/// Opening a store decodes every entry once, and `JSONDecoder` costs about 20 µs per entry, which is
/// 20 s for a million. This decoder reads, with the package's `JSONScanner`, the shape the store itself
/// writes — no white space, ASCII strings without escapes, integer numbers, the transaction as one flat
/// object — and returns `nil` for anything else (an escape, a non-ASCII byte, a fraction, an unknown
/// delivery state, a missing or repeated key, ...). The caller then falls back to `JSONDecoder`, which stays
/// the authority on what is valid and on the error to report. For every input it accepts, the result equals
/// `JSONDecoder`'s; the tests check that equivalence.
enum FastRecordDecoder {
    /// Decodes an operation, or returns `nil` to ask for `JSONDecoder`.
    static func decode(_ body: UnsafeRawBufferPointer) -> JournalOperation? {
        var scanner = JSONScanner(body)
        guard scanner.consume(UInt8(ascii: "{")), let name = scanner.string(), let kind = Kind.named(name),
            scanner.consume(UInt8(ascii: ":")), let entry = ledgerEntry(from: &scanner)
        else { return nil }
        var signed = JournalOperation.SignedField.unchanged
        if scanner.consume(UInt8(ascii: ",")) {
            guard let field = signedField(of: kind, from: &scanner) else { return nil }
            signed = field
        }
        guard scanner.consume(UInt8(ascii: "}")), scanner.isAtEnd else { return nil }
        switch kind {
        case .entry: return .entry(entry, signed: signed)
        case .insert: return .insert(entry, signed: signed)
        case .replace: return .replace(entry, signed: signed)
        }
    }

    /// The second key of an entry record: `"signedTransaction":"…"|null|{"header":offset,"rest":"…"}` in a journal,
    /// `"signed":[offset,length]` in a snapshot.
    private static func signedField(of kind: Kind, from scanner: inout JSONScanner) -> JournalOperation.SignedField? {
        guard let key = scanner.string(), scanner.consume(UInt8(ascii: ":")) else { return nil }
        if kind == .entry {
            guard key.elementsEqual("signed".utf8), scanner.consume(UInt8(ascii: "[")),
                let offset = natural(&scanner), scanner.consume(UInt8(ascii: ",")),
                let length = natural(&scanner).flatMap(UInt32.init(exactly:)), scanner.consume(UInt8(ascii: "]"))
            else { return nil }
            return .reference(.init(offset: offset, length: length))
        }
        guard key.elementsEqual("signedTransaction".utf8) else { return nil }
        if scanner.consume(UInt8(ascii: "{")) {
            guard let headerKey = scanner.string(), headerKey.elementsEqual("header".utf8),
                scanner.consume(UInt8(ascii: ":")), let header = natural(&scanner), scanner.consume(UInt8(ascii: ",")),
                let restKey = scanner.string(), restKey.elementsEqual("rest".utf8), scanner.consume(UInt8(ascii: ":")),
                let rest = scanner.text(), scanner.consume(UInt8(ascii: "}"))
            else { return nil }
            return .split(header: header, rest: rest)
        }
        switch scanner.optional({ $0.text() }) {
        case .some(.some(let jws)): return .jws(jws)
        case .some(.none): return .removed
        case .none: return nil
        }
    }

    /// The operations that carry an entry.
    private enum Kind: Int, CaseIterable {
        case entry, insert, replace

        private static let keys = JSONKeyTable(allCases.map { "\($0)" })

        /// The kind whose JSON key is `bytes`.
        static func named(_ bytes: UnsafeRawBufferPointer) -> Kind? {
            keys.index(of: bytes).flatMap(Kind.init(rawValue:))
        }
    }

    /// The keys of a ledger entry, as its synthesized `Codable` conformance names them.
    private enum Field: Int, CaseIterable {
        case transactionId, originalTransactionId, userId, productId, transaction, orderId, deliveryState
        case deliveryAttempts, nextAttemptAt, lastError, recordedAt, deliveredAt, revokedAt
        case revocationDelivered, grantGeneration, sequence, revision, grantAttempted, grantedUnits, refundAccessKept
        case givenUpAt, consentRescindedAt

        private static let keys = JSONKeyTable(allCases.map { "\($0)" })

        /// The field whose JSON key is `bytes`.
        static func named(_ bytes: UnsafeRawBufferPointer) -> Field? {
            keys.index(of: bytes).flatMap(Field.init(rawValue:))
        }

        /// The fields a record must hold: all but the optional ones, which `JSONDecoder` lets it leave out.
        static let requiredMask: Int =
            allCases.reduce(0) { $0 | 1 << $1.rawValue }
            & ~[
                Field.orderId, .lastError, .nextAttemptAt, .deliveredAt, .revokedAt, .grantedUnits, .refundAccessKept,
                .givenUpAt, .consentRescindedAt,
            ]
            .reduce(0) {
                $0 | 1 << $1.rawValue
            }
    }

    /// A ledger entry: an object of its fields, each once, in any order.
    private static func ledgerEntry(from scanner: inout JSONScanner) -> LedgerEntry? {
        guard scanner.consume(UInt8(ascii: "{")) else { return nil }
        var entry = LedgerEntry(
            transaction: TransactionPayload(),
            transactionId: "",
            originalTransactionId: "",
            userId: "",
            productId: "",
            recordedAt: Date(millisecondsSince1970: 0)
        )
        var seen = 0
        repeat {
            // Unknown keys are left to JSONDecoder (which would ignore them); so are repeated ones.
            guard let key = scanner.string(), scanner.consume(UInt8(ascii: ":")), let field = Field.named(key),
                seen & (1 << field.rawValue) == 0, read(field, into: &entry, from: &scanner)
            else { return nil }
            seen |= 1 << field.rawValue
        } while scanner.consume(UInt8(ascii: ","))
        guard scanner.consume(UInt8(ascii: "}")), seen & Field.requiredMask == Field.requiredMask else { return nil }
        // The payload repeats the entry's ids: share one string instead of keeping two copies.
        if entry.transaction.transactionId == entry.transactionId {
            entry.transaction.transactionId = entry.transactionId
        }
        if entry.transaction.originalTransactionId == entry.originalTransactionId {
            entry.transaction.originalTransactionId = entry.originalTransactionId
        }
        if entry.transaction.productId == entry.productId {
            entry.transaction.productId = entry.productId
        }
        return entry
    }

    /// Reads the value of one field into the entry; `false` when it is not of the field's type.
    private static func read(_ field: Field, into entry: inout LedgerEntry, from scanner: inout JSONScanner) -> Bool {
        switch field {
        case .transactionId: set(&entry.transactionId, scanner.text())
        case .originalTransactionId: set(&entry.originalTransactionId, scanner.text())
        case .userId: set(&entry.userId, scanner.text())
        case .productId: set(&entry.productId, scanner.text())
        case .transaction: set(&entry.transaction, FastTransactionDecoder.decodeObject(from: &scanner))
        case .orderId: set(&entry.orderId, scanner.optional { $0.text() })
        case .deliveryState: set(&entry.deliveryState, scanner.text().flatMap(DeliveryState.init(rawValue:)))
        case .deliveryAttempts: set(&entry.deliveryAttempts, scanner.integer().flatMap { Int(exactly: $0) })
        case .nextAttemptAt: set(&entry.nextAttemptAt, scanner.optional(date))
        case .lastError: set(&entry.lastError, scanner.optional { $0.text() })
        case .recordedAt: set(&entry.recordedAt, date(&scanner))
        case .deliveredAt: set(&entry.deliveredAt, scanner.optional(date))
        case .revokedAt: set(&entry.revokedAt, scanner.optional(date))
        case .revocationDelivered: set(&entry.revocationDelivered, scanner.bool())
        case .grantGeneration: set(&entry.grantGeneration, scanner.integer().flatMap { Int(exactly: $0) })
        case .sequence: set(&entry.sequence, scanner.integer())
        case .revision: set(&entry.revision, scanner.integer())
        case .grantAttempted: set(&entry.grantAttempted, scanner.bool())
        case .grantedUnits: set(&entry.grantedUnits, scanner.optional { $0.integer() })
        case .refundAccessKept: set(&entry.refundAccessKept, scanner.optional { $0.bool() })
        case .givenUpAt: set(&entry.givenUpAt, scanner.optional(date))
        case .consentRescindedAt: set(&entry.consentRescindedAt, scanner.optional(date))
        }
    }

    /// A number of decimal digits without sign or leading zeros, as the encoder writes the members of an array.
    private static func natural(_ scanner: inout JSONScanner) -> UInt64? {
        let start = scanner.index
        var value: UInt64 = 0
        while scanner.index < scanner.bytes.count,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scanner.bytes[scanner.index])
        {
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = shifted.addingReportingOverflow(
                UInt64(scanner.bytes[scanner.index] - UInt8(ascii: "0"))
            )
            guard !overflowed, !carried else { return nil }
            value = sum
            scanner.index += 1
        }
        let digits = scanner.index - start
        guard digits > 0, !(digits > 1 && scanner.bytes[start] == UInt8(ascii: "0")) else { return nil }
        return value
    }

    /// Stores `value` if there is one; whether there was.
    private static func set<Value>(_ field: inout Value, _ value: Value?) -> Bool {
        guard let value else { return false }
        field = value
        return true
    }

    /// A date in milliseconds since 1970, within what `Date` and the encoder keep exact.
    private static func date(_ scanner: inout JSONScanner) -> Date? {
        guard let milliseconds = scanner.integer(), milliseconds.magnitude <= UInt64(AppStoreJSON.maximumMilliseconds)
        else { return nil }
        return Date(millisecondsSince1970: milliseconds)
    }
}
