#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
package import IAPCore

/// Writes the JSON of a ledger entry by hand: the journal writes up to three records per delivery, and
/// `JSONEncoder` was half of the CPU each record cost.
///
/// The output is ordinary JSON with the same keys and values `JSONEncoder` writes with
/// ``AppStoreJSON/makeEncoder()`` (dates as whole milliseconds, absent optionals left out); the entry's key
/// order differs, which no reader depends on. The transaction is written by `AppStoreJSONWriter`, the package's
/// one list of a transaction's JSON fields. Tests check that every entry written here decodes, with
/// `JSONDecoder`, to an equal entry.
package enum FastRecordEncoder {
    /// The JSON of `{"<operation>": <entry>}`.
    package static func encode(_ entry: LedgerEntry, as operation: String) throws -> [UInt8] {
        try encode(entry, as: operation, signed: .unchanged)
    }

    /// The JSON of `{"<operation>": <entry>}`, with the key of its signed transaction when `signed` says so.
    static func encode(_ entry: LedgerEntry, as operation: String, signed: JournalOperation.SignedField) throws
        -> [UInt8]
    {
        var out = JSONWriter()
        out.raw("{\"")
        out.raw(operation)
        out.raw("\":")
        try write(entry, to: &out)
        switch signed {
        case .unchanged:
            break
        case .removed:
            out.raw(",\"signedTransaction\":null")
        case .jws(let jws):
            out.raw(",\"signedTransaction\":")
            out.string(jws)
        case .split(let header, let rest):
            out.raw(",\"signedTransaction\":{\"header\":\(header),\"rest\":")
            out.string(rest)
            out.raw("}")
        case .reference(let reference):
            out.raw(",\"signed\":[\(reference.offset),\(reference.length)]")
        }
        out.raw("}")
        guard !out.invalid else {
            throw IAPError(
                .storageFailure,
                "transaction \(entry.transactionId) has a date outside what the ledger stores"
            )
        }
        return out.bytes
    }

    private static func write(_ entry: LedgerEntry, to out: inout JSONWriter) throws {
        out.open()
        out.field("transactionId", entry.transactionId)
        out.field("originalTransactionId", entry.originalTransactionId)
        out.field("userId", entry.userId)
        out.field("productId", entry.productId)
        out.key("transaction")
        out.transaction(entry.transaction)
        out.field("orderId", entry.orderId)
        out.field("deliveryState", entry.deliveryState.rawValue)
        out.field("deliveryAttempts", Int64(entry.deliveryAttempts))
        out.field("nextAttemptAt", entry.nextAttemptAt)
        out.field("lastError", entry.lastError)
        out.field("recordedAt", entry.recordedAt)
        out.field("deliveredAt", entry.deliveredAt)
        out.field("revokedAt", entry.revokedAt)
        out.field("revocationDelivered", entry.revocationDelivered)
        out.field("grantGeneration", Int64(entry.grantGeneration))
        out.field("grantAttempted", entry.grantAttempted)
        out.field("grantedUnits", entry.grantedUnits)
        out.field("refundAccessKept", entry.refundAccessKept)
        out.field("givenUpAt", entry.givenUpAt)
        out.field("consentRescindedAt", entry.consentRescindedAt)
        out.field("sequence", entry.sequence)
        out.field("revision", entry.revision)
        out.close()
    }
}

/// A minimal JSON writer for known shapes.
private struct JSONWriter {
    var bytes: [UInt8] = []
    /// Set when a value cannot be written (a date beyond 64-bit milliseconds).
    var invalid = false
    private var needsComma = [false]

    init() {
        bytes.reserveCapacity(2_048)
    }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    mutating func key(_ name: StaticString) {
        if needsComma[needsComma.count - 1] {
            bytes.append(UInt8(ascii: ","))
        }
        needsComma[needsComma.count - 1] = true
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        raw(String(value))
    }

    mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        raw(value ? "true" : "false")
    }

    /// A date as whole milliseconds since 1970, as ``AppStoreJSON`` writes it.
    mutating func field(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        key(name)
        // Only what the decoders read back: ±(2^48 - 1) ms, about ±8,900 years.
        guard let milliseconds = Int64(exactly: (value.timeIntervalSince1970 * 1000).rounded()),
            milliseconds.magnitude <= UInt64(AppStoreJSON.maximumMilliseconds)
        else {
            invalid = true
            raw("0")
            return
        }
        raw(String(milliseconds))
    }

    /// A transaction payload, as `AppStoreJSONWriter` writes it, with no date beyond what the ledger's readers read
    /// back (``AppStoreJSON/maximumMilliseconds``).
    mutating func transaction(_ payload: TransactionPayload) {
        var writer = AppStoreJSONWriter(capacity: 0)
        writer.dateLimit = AppStoreJSON.maximumMilliseconds
        swap(&writer.bytes, &bytes)
        defer { swap(&writer.bytes, &bytes) }
        do {
            try writer.append(payload)
        } catch {
            invalid = true
        }
    }

    /// A JSON string, escaped as `JSONEncoder` escapes it (``AppStoreJSONWriter``, which copies the runs of bytes
    /// that need no escape whole: a signed transaction, the bulk of a record, has none).
    mutating func string(_ value: String) {
        var writer = AppStoreJSONWriter(capacity: 0)
        swap(&writer.bytes, &bytes)
        writer.appendString(value)
        swap(&writer.bytes, &bytes)
    }
}
