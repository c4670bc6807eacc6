#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// Decodes the `op` value of a record.
///
/// One instance per thread: it owns a `JSONDecoder` with the App Store conventions (dates in milliseconds).
struct RecordDecoder {
    private let decoder = AppStoreJSON.makeDecoder()
    private let strings = StringInterner()

    /// Decodes an operation from its JSON bytes: the fast path for entries, `JSONDecoder` for the rest.
    func decode(_ body: UnsafeRawBufferPointer) throws -> JournalOperation {
        let operation = try FastRecordDecoder.decode(body) ?? decoder.decode(JournalOperation.self, from: Data(body))
        switch operation {
        case .insert(let entry, let signed): return .insert(strings.share(entry), signed: signed)
        case .replace(let entry, let signed): return .replace(strings.share(entry), signed: signed)
        case .entry(let entry, let signed): return .entry(strings.share(entry), signed: signed)
        default: return operation
        }
    }
}

/// Shares one copy of the long strings that repeat across a ledger's entries (a customer's appAccountToken and
/// appTransactionId, product and bundle ids): at a million transactions that is tens of megabytes.
///
/// One instance per decoding thread; strings of up to 15 UTF-8 bytes are stored inline by Swift and skipped.
final class StringInterner {
    private var table: [String: String] = [:]

    func share(_ entry: LedgerEntry) -> LedgerEntry {
        var entry = entry
        entry.userId = share(entry.userId)
        entry.productId = share(entry.productId)
        entry.transaction.productId = entry.transaction.productId.map(share)
        entry.transaction.bundleId = entry.transaction.bundleId.map(share)
        entry.transaction.appTransactionId = entry.transaction.appTransactionId.map(share)
        entry.transaction.appAccountToken = entry.transaction.appAccountToken.map(share)
        entry.transaction.subscriptionGroupIdentifier = entry.transaction.subscriptionGroupIdentifier.map(share)
        return entry
    }

    private func share(_ string: String) -> String {
        guard string.utf8.count > 15 else { return string }
        if let shared = table[string] {
            return shared
        }
        if table.count >= 1 << 16 {
            table.removeAll(keepingCapacity: true)
        }
        table[string] = string
        return string
    }
}
