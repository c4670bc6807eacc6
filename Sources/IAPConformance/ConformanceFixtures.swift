#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

/// The entries, dates and assertions the conformance checks share.
enum ConformanceFixtures {
    /// 2026-01-01T00:00:00Z, the instant every fixture date is relative to (whole milliseconds, so any
    /// backend that keeps millisecond precision reads them back unchanged).
    static let epochMilliseconds: Int64 = 1_767_225_600_000

    /// The fixture instant `seconds` after 2026-01-01T00:00:00Z.
    static func date(_ seconds: Int64) -> Date {
        Date(millisecondsSince1970: epochMilliseconds + seconds * 1000)
    }

    /// A new ledger entry as the delivery pipeline would record it.
    ///
    /// - Parameters:
    ///   - transactionId: The transaction id.
    ///   - userId: The owner.
    ///   - originalTransactionId: The family; defaults to the transaction id.
    ///   - second: When it was purchased and recorded, in seconds after the fixture epoch.
    static func entry(
        _ transactionId: String,
        user userId: String,
        original originalTransactionId: String? = nil,
        second: Int64 = 0
    ) -> LedgerEntry {
        let original = originalTransactionId ?? transactionId
        let purchased = date(second)
        let transaction = TransactionPayload(
            originalTransactionId: original,
            transactionId: transactionId,
            bundleId: "com.example.conformance",
            productId: "com.example.coins.100",
            purchaseDate: purchased,
            originalPurchaseDate: purchased,
            quantity: 1,
            type: .consumable,
            inAppOwnershipType: .purchased,
            signedDate: purchased,
            environment: .sandbox,
            storefront: "USA",
            currency: "USD",
            price: 990
        )
        return LedgerEntry(
            transaction: transaction,
            transactionId: transactionId,
            originalTransactionId: original,
            userId: userId,
            productId: "com.example.coins.100",
            orderId: "order-\(transactionId)",
            recordedAt: purchased
        )
    }

    /// A renewal info of a subscription, signed at `second` after the fixture epoch.
    static func renewalInfo(_ originalTransactionId: String?, signedAt second: Int64?, productId: String)
        -> RenewalInfoPayload
    {
        RenewalInfoPayload(
            originalTransactionId: originalTransactionId,
            autoRenewProductId: productId,
            productId: productId,
            autoRenewStatus: .on,
            signedDate: second.map(date),
            environment: .sandbox
        )
    }

    // MARK: Descriptions for messages

    /// A one-line description of an entry: id, sequence, revision and delivery state.
    static func describe(_ entry: LedgerEntry?) -> String {
        guard let entry else {
            return "nil"
        }
        var text = "\(entry.transactionId) (sequence \(entry.sequence), revision \(entry.revision), "
        text += "user \(entry.userId), \(entry.deliveryState.rawValue)"
        if let next = entry.nextAttemptAt {
            text += ", nextAttemptAt \(next)"
        }
        return text + ")"
    }

    /// A short description of what a store call returned.
    static func describeValue(_ value: Any) -> String {
        switch value {
        case let outcome as InsertOutcome:
            switch outcome {
            case .inserted(let entry):
                return ".inserted(\(describe(entry)))"
            case .existing(let entry):
                return ".existing(\(describe(entry)))"
            }
        case let page as LedgerPage:
            return "a page of \(ids(page.entries)) with nextCursor \(page.nextCursor ?? "nil")"
        case let entries as [LedgerEntry]:
            return ids(entries)
        default:
            return String(describing: value)
        }
    }

    /// The transaction ids of entries, as a bracketed list.
    static func ids(_ entries: [LedgerEntry]) -> String {
        "[" + entries.map(\.transactionId).joined(separator: ", ") + "]"
    }

    /// The fields in which two entries differ, with both values, or an empty list when they are equal.
    static func differences(expected: LedgerEntry, actual: LedgerEntry) -> [String] {
        var found: [String] = []
        func compare<Value: Equatable>(_ name: String, _ keyPath: KeyPath<LedgerEntry, Value>) {
            let want = expected[keyPath: keyPath]
            let got = actual[keyPath: keyPath]
            if want != got {
                found.append("\(name): expected \(String(describing: want)), got \(String(describing: got))")
            }
        }
        compare("transactionId", \.transactionId)
        compare("originalTransactionId", \.originalTransactionId)
        compare("userId (its UTF-8 bytes)", \.userId.utf8Bytes)
        compare("productId", \.productId)
        compare("orderId", \.orderId)
        compare("deliveryState", \.deliveryState)
        compare("deliveryAttempts", \.deliveryAttempts)
        compare("nextAttemptAt", \.nextAttemptAt)
        compare("lastError", \.lastError)
        compare("recordedAt", \.recordedAt)
        compare("deliveredAt", \.deliveredAt)
        compare("revokedAt", \.revokedAt)
        compare("revocationDelivered", \.revocationDelivered)
        compare("grantGeneration", \.grantGeneration)
        compare("grantAttempted", \.grantAttempted)
        compare("grantedUnits", \.grantedUnits)
        compare("refundAccessKept", \.refundAccessKept)
        compare("givenUpAt", \.givenUpAt)
        compare("consentRescindedAt", \.consentRescindedAt)
        compare("sequence", \.sequence)
        compare("revision", \.revision)
        if expected.transaction != actual.transaction {
            found.append("transaction: the stored TransactionPayload differs from the one written")
        }
        return found
    }

    // MARK: Assertions

    /// Throws a violation with `message` unless `condition` holds.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition {
            throw ConformanceViolation(message())
        }
    }

    /// Inserts an entry that must be new, and returns it as stored.
    static func insertNew(_ entry: LedgerEntry, into store: any EntitlementStore) async throws -> LedgerEntry {
        switch try await store.insert(entry) {
        case .inserted(let stored):
            return stored
        case .existing(let stored):
            throw ConformanceViolation(
                "insert of new transaction \(entry.transactionId) returned .existing(\(describe(stored))) "
                    + "on a store that never held it"
            )
        }
    }

    /// Replaces an entry and requires the store to accept it; returns the entry as stored after.
    static func replaceAccepted(
        _ entry: LedgerEntry,
        ifRevision revision: Int64,
        in store: any EntitlementStore
    ) async throws -> LedgerEntry {
        try require(
            try await store.replace(entry, ifRevision: revision),
            "replace of \(entry.transactionId) with its current revision \(revision) returned false"
        )
        guard let stored = try await store.entry(transactionId: entry.transactionId) else {
            throw ConformanceViolation("entry \(entry.transactionId) is gone after a successful replace")
        }
        return stored
    }

    /// Describes how an operation failed to throw ``IAPError`` with code `invalidArgument`, or `nil` if it did.
    static func invalidArgumentProblem<Result>(
        _ operation: String,
        _ body: () async throws -> Result
    ) async -> String? {
        await errorProblem(.invalidArgument, operation, body)
    }

    /// Describes how an operation failed to throw ``IAPError`` with `code`, or `nil` if it did.
    static func errorProblem<Result>(
        _ code: IAPError.Code,
        _ operation: String,
        _ body: () async throws -> Result
    ) async -> String? {
        do {
            let result = try await body()
            return "\(operation) returned \(describeValue(result)) instead of throwing IAPError(.\(code))"
        } catch let error as IAPError where error.code == code {
            return nil
        } catch let error as IAPError {
            return "\(operation) threw IAPError(.\(error.code)) (\(error.message)); the contract requires "
                + "IAPError(.\(code))"
        } catch {
            return "\(operation) threw \(type(of: error)) \(error); the contract requires IAPError(.\(code))"
        }
    }

    /// Requires an operation to throw ``IAPError`` with code `invalidArgument`.
    static func requireInvalidArgument<Result>(
        _ operation: String,
        _ body: () async throws -> Result
    ) async throws {
        if let problem = await invalidArgumentProblem(operation, body) {
            throw ConformanceViolation(problem)
        }
    }
}

extension String {
    /// The UTF-8 bytes, for comparing user ids as the ledger does (never by canonical equivalence).
    fileprivate var utf8Bytes: [UInt8] { Array(utf8) }
}
