public import Foundation
import IAPCore
public import IAPServerAPI

/// A ``RenewalExtensionStore`` in a file: each new or completed record is appended as one JSON line with `fsync`;
/// on open, the last line of each request identifier wins.
///
/// One process at a time holds the file (`flock`), which is what makes ``begin(_:limit:since:)``'s check and
/// insert atomic across processes.
public actor FileRenewalExtensionStore: RenewalExtensionStore {
    private let file: JSONLinesFile
    private var byIdentifier: [String: RenewalExtensionRecord] = [:]
    private var order: [String] = []

    /// Opens (creating) the store.
    ///
    /// - Parameter path: The file, such as `renewal-extensions.jsonl`.
    /// - Throws: ``IAPError`` `storageLocked`, `storageCorrupted` or `storageFailure`.
    public init(path: String) throws {
        file = try JSONLinesFile(path: path)
        for record in try file.readAll(RenewalExtensionRecord.self) {
            if byIdentifier.updateValue(record, forKey: record.requestIdentifier) == nil {
                order.append(record.requestIdentifier)
            }
        }
    }

    /// The record of a request identifier, or `nil`.
    public func record(requestIdentifier: String) -> RenewalExtensionRecord? {
        byIdentifier[requestIdentifier]
    }

    /// Stores a new request durably unless its identifier exists or the subscription reached the limit.
    ///
    /// - Throws: ``IAPError`` `storageFailure`; nothing was stored.
    public func begin(_ record: RenewalExtensionRecord, limit: Int, since: Date) throws -> RenewalExtensionBeginOutcome
    {
        let outcome = RenewalExtensionBeginOutcome.decide(
            record,
            existing: byIdentifier[record.requestIdentifier],
            family: records(originalTransactionId: record.originalTransactionId),
            limit: limit,
            since: since
        )
        if case .started(let started) = outcome {
            try file.append(started)
            byIdentifier[started.requestIdentifier] = started
            order.append(started.requestIdentifier)
        }
        return outcome
    }

    /// Records Apple's answer durably.
    ///
    /// - Throws: ``IAPError`` `notFound` for an unknown request identifier, `storageFailure`.
    public func complete(_ record: RenewalExtensionRecord) throws {
        guard byIdentifier[record.requestIdentifier] != nil else {
            throw IAPError(.notFound, "no renewal extension request '\(record.requestIdentifier)'")
        }
        try file.append(record)
        byIdentifier[record.requestIdentifier] = record
    }

    /// The records of a subscription, oldest first.
    public func records(originalTransactionId: String) -> [RenewalExtensionRecord] {
        order.compactMap { byIdentifier[$0] }.filter { $0.originalTransactionId == originalTransactionId }
    }

    /// Closes the file and releases its lock.
    public func close() {
        file.close()
    }
}
