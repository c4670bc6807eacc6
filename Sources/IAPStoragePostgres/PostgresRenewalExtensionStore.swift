#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore
public import IAPServerAPI

/// A ``RenewalExtensionStore`` in the ledger's PostgreSQL schema, shared by every instance of a fleet.
///
/// One row per request in `iap_renewal_extensions`, on the ledger's connections: open the
/// ``PostgresEntitlementStore`` (which creates or migrates the table), then make this store from it.
///
/// Across processes:
/// - **A request identifier is recorded once**: it is the table's primary key, and the insert is `ON CONFLICT
///   (request_identifier) DO NOTHING`; of concurrent requests with one identifier, from any instance, exactly one is
///   `.started` and the others read it back as `.existing` (the ``RenewalDateExtender`` then refuses other parameters
///   with `requestIdentifierReused`).
/// - **The 365-day count is consistent**: ``begin(_:limit:since:)`` is one transaction that first takes a
///   transaction-level advisory lock of the subscription (`pg_advisory_xact_lock` keyed by `swift-iap
///   renewal-extension <schema> <original transaction id>`), then reads the identifier and the subscription's
///   requests, decides, and inserts. Requests for one subscription queue behind each other for that short
///   transaction; other subscriptions do not wait. The lock ends with the transaction, also when its connection
///   drops.
///
/// Dates are kept to the millisecond (records come back rounded to it); keys compare byte by byte.
public final class PostgresRenewalExtensionStore: RenewalExtensionStore {
    /// The ledger whose schema and connections the store uses.
    public let ledger: PostgresEntitlementStore

    /// Makes the store of a ledger's schema.
    ///
    /// - Parameter ledger: The open ledger.
    public init(ledger: PostgresEntitlementStore) {
        self.ledger = ledger
    }

    /// The record of a request identifier, or `nil`.
    ///
    /// - Parameter requestIdentifier: The request identifier.
    /// - Returns: The record.
    /// - Throws: ``IAPError`` if the database fails, `storageCorrupted` for a row that does not read back.
    public func record(requestIdentifier: String) async throws -> RenewalExtensionRecord? {
        guard PostgresEntitlementStore.storable(requestIdentifier) else {
            return nil
        }
        return try await ledger.pool.run(retryingOnLostConnection: true) { connection in
            try Self.records(connection.execute(.extensionByIdentifier, [requestIdentifier])).first
        }
    }

    /// Stores a new request unless its identifier exists or the subscription reached the limit, in one transaction
    /// under the subscription's advisory lock.
    ///
    /// - Parameters:
    ///   - record: The new request (state `requested`).
    ///   - limit: The most `requested` or `succeeded` extensions of the subscription since `since`.
    ///   - since: The start of the window.
    /// - Returns: What was decided; `.started` carries the record as stored (dates to the millisecond).
    /// - Throws: ``IAPError`` `invalidArgument` for text PostgreSQL cannot hold (a NUL character); `storageUnavailable`
    ///   or `storageFailure` if the database fails (nothing was stored, or, for a connection lost during the commit,
    ///   perhaps it was: the same request again answers `.existing` then).
    public func begin(
        _ record: RenewalExtensionRecord,
        limit: Int,
        since: Date
    ) async throws -> RenewalExtensionBeginOutcome {
        let stored = Self.rounded(record)
        let lock = "swift-iap renewal-extension \(ledger.configuration.schema) \(record.originalTransactionId)"
        return try await ledger.pool.run { connection in
            try connection.transaction {
                try connection.execute(.lockSubscription, [lock])
                let existing = try Self.records(
                    connection.execute(.extensionByIdentifier, [stored.requestIdentifier])
                ).first
                let family =
                    existing == nil
                    ? try Self.records(connection.execute(.extensionsByOriginal, [stored.originalTransactionId])) : []
                let outcome = RenewalExtensionBeginOutcome.decide(
                    stored,
                    existing: existing,
                    family: family,
                    limit: limit,
                    since: since
                )
                guard case .started = outcome else {
                    return outcome
                }
                if try connection.execute(.insertExtension, Self.parameters(stored)).count == 1 {
                    return outcome
                }
                // A request of another subscription took the identifier after the read above (it held another
                // subscription's lock); the insert waited for it to commit.
                guard
                    let taken = try Self.records(
                        connection.execute(.extensionByIdentifier, [stored.requestIdentifier])
                    ).first
                else {
                    throw IAPError(
                        .storageFailure,
                        "renewal extension request '\(stored.requestIdentifier)' was neither inserted nor found; "
                            + "try again",
                        isRetryable: true
                    )
                }
                return .existing(taken)
            }
        }
    }

    /// Replaces the record of the same request identifier with Apple's answer.
    ///
    /// - Parameter record: The completed record.
    /// - Throws: ``IAPError`` `notFound` for an unknown request identifier (nothing is stored), `invalidArgument` for
    ///   text PostgreSQL cannot hold, or if the database fails.
    public func complete(_ record: RenewalExtensionRecord) async throws {
        let parameters = Self.parameters(record)
        let updated = try await ledger.pool.run { connection in
            try connection.execute(.completeExtension, parameters).count
        }
        guard updated == 1 else {
            throw IAPError(.notFound, "no renewal extension request '\(record.requestIdentifier)'")
        }
    }

    /// The records of a subscription, in the order they were begun.
    ///
    /// - Parameter originalTransactionId: The subscription's original transaction id.
    /// - Returns: The records.
    /// - Throws: ``IAPError`` if the database fails, `storageCorrupted` for a row that does not read back.
    public func records(originalTransactionId: String) async throws -> [RenewalExtensionRecord] {
        guard PostgresEntitlementStore.storable(originalTransactionId) else {
            return []
        }
        return try await ledger.pool.run(retryingOnLostConnection: true) { connection in
            try Self.records(connection.execute(.extensionsByOriginal, [originalTransactionId]))
        }
    }

    // MARK: Rows

    /// The parameters of ``PostgresStatement/insertExtension`` and ``PostgresStatement/completeExtension``, in the
    /// order of ``PostgresStatement/extensionColumns``.
    private static func parameters(_ record: RenewalExtensionRecord) -> [String?] {
        [
            record.requestIdentifier, record.originalTransactionId, String(record.extendByDays),
            String(record.reasonCode), String(record.requestedAt.millisecondsSince1970), record.state.rawValue,
            record.effectiveDate.map { String($0.millisecondsSince1970) }, record.webOrderLineItemId, record.error,
            record.completedAt.map { String($0.millisecondsSince1970) },
        ]
    }

    /// The record with its dates rounded to the millisecond, as it reads back.
    private static func rounded(_ record: RenewalExtensionRecord) -> RenewalExtensionRecord {
        func round(_ date: Date) -> Date {
            Date(millisecondsSince1970: date.millisecondsSince1970)
        }
        var rounded = record
        rounded.requestedAt = round(record.requestedAt)
        rounded.effectiveDate = record.effectiveDate.map(round)
        rounded.completedAt = record.completedAt.map(round)
        return rounded
    }

    /// The records of rows of ``PostgresStatement/extensionColumns``.
    private static func records(_ result: PostgresResult) throws -> [RenewalExtensionRecord] {
        try (0..<result.count).map { row in
            let identifier = result.string(row, 0) ?? ""
            guard let original = result.string(row, 1), let days = Int32(exactly: try result.int64(row, 2)),
                let reason = Int32(exactly: try result.int64(row, 3)),
                let state = result.string(row, 5).flatMap(RenewalExtensionRecord.State.init(rawValue:))
            else {
                throw IAPError(
                    .storageCorrupted,
                    "the renewal extension request '\(identifier)' in PostgreSQL does not read back"
                )
            }
            var record = RenewalExtensionRecord(
                requestIdentifier: identifier,
                originalTransactionId: original,
                extendByDays: days,
                reasonCode: reason,
                requestedAt: Date(millisecondsSince1970: try result.int64(row, 4))
            )
            record.state = state
            record.effectiveDate = result.isNull(row, 6) ? nil : Date(millisecondsSince1970: try result.int64(row, 6))
            record.webOrderLineItemId = result.string(row, 7)
            record.error = result.string(row, 8)
            record.completedAt = result.isNull(row, 9) ? nil : Date(millisecondsSince1970: try result.int64(row, 9))
            return record
        }
    }
}
