#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPServerAPI

extension SimulatedAppStoreEngine {
    // MARK: - Errors as the App Store Server API reports them

    /// An App Store Server API error: HTTP status, Apple's error code and message.
    static func apiError(status: Int, code: Int64, _ message: String) -> IAPError {
        var error = IAPError(.apiError, message)
        error.httpStatus = status
        error.apiErrorCode = code
        return error
    }

    static func invalidTransactionId(_ id: String) -> IAPError {
        apiError(status: 400, code: 4_000_006, "Invalid transaction id: '\(id)'")
    }

    static func transactionIdNotFound(_ id: String) -> IAPError {
        apiError(status: 404, code: 4_040_010, "Transaction id not found: \(id)")
    }

    static func invalidRevision(_ revision: String) -> IAPError {
        apiError(status: 400, code: 4_000_005, "Invalid request revision: '\(revision)'")
    }

    /// The account a transaction id, original transaction id or app transaction id belongs to.
    func account(forAnyTransactionId id: String) throws -> String {
        guard !id.isEmpty, id.count <= 20, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw Self.invalidTransactionId(id)
        }
        if let record = transactions[id] {
            return record.account
        }
        if let account = accountIdsByAppTransactionId[id] {
            return account
        }
        throw Self.transactionIdNotFound(id)
    }

    // MARK: - Get Transaction Info

    func transactionInfo(transactionId: String) throws -> TransactionInfoResponse {
        guard !transactionId.isEmpty, transactionId.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw Self.invalidTransactionId(transactionId)
        }
        guard let record = transactions[transactionId] else {
            throw Self.transactionIdNotFound(transactionId)
        }
        return TransactionInfoResponse(signedTransactionInfo: try signed(record).signedTransaction)
    }

    // MARK: - Revisions

    /// What a revision token says: whose history, which listing, and the modification count it stopped at.
    private struct Revision {
        var appTransactionId: String
        var listing: String
        var sequence: UInt64

        var token: String {
            Data("\(appTransactionId):\(listing):\(sequence)".utf8).base64EncodedString()
        }

        init(appTransactionId: String, listing: String, sequence: UInt64) {
            self.appTransactionId = appTransactionId
            self.listing = listing
            self.sequence = sequence
        }

        init?(token: String) {
            guard let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8) else {
                return nil
            }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let sequence = UInt64(parts[2]) else { return nil }
            self.init(appTransactionId: String(parts[0]), listing: String(parts[1]), sequence: sequence)
        }
    }

    /// One page of a listing ordered by modification count, after the position a revision names.
    private func page(
        of records: [SimulatedTransactionRecord],
        account: SimulatedAccountRecord,
        listing: String,
        descending: Bool,
        revision: String?
    ) throws -> (signed: [String], revision: String, hasMore: Bool) {
        var position: UInt64?
        if let revision {
            guard let parsed = Revision(token: revision), parsed.appTransactionId == account.appTransactionId,
                parsed.listing == listing
            else {
                throw Self.invalidRevision(revision)
            }
            position = parsed.sequence
        }
        let ordered = records.sorted { descending ? $0.sequence > $1.sequence : $0.sequence < $1.sequence }
        let remaining = ordered.filter { record in
            guard let position else { return true }
            return descending ? record.sequence < position : record.sequence > position
        }
        let items = Array(remaining.prefix(Self.historyPageSize))
        let hasMore = remaining.count > items.count
        let next: UInt64
        if let last = items.last, hasMore || descending {
            next = last.sequence
        } else if descending {
            next = position ?? 0
        } else {
            // Everything up to now has been listed: resuming from here returns only what changes later.
            next = max(account.modificationCounter, position ?? 0)
        }
        let signed = try items.map { try self.signed($0).signedTransaction }
        let token = Revision(appTransactionId: account.appTransactionId, listing: listing, sequence: next).token
        return (signed, token, hasMore)
    }

    // MARK: - Get Transaction History

    func transactionHistory(
        anyTransactionId: String,
        revision: String?,
        request: TransactionHistoryRequest
    ) throws -> HistoryResponse {
        let accountId = try account(forAnyTransactionId: anyTransactionId)
        guard let account = accounts[accountId] else { throw Self.transactionIdNotFound(anyTransactionId) }
        if let start = request.startDate, let end = request.endDate, start >= end {
            throw Self.apiError(status: 400, code: 4_000_013, "The start date must precede the end date")
        }
        let records = transactionIdsByAccount[accountId, default: []].compactMap { transactions[$0] }
            .filter { matches($0, request) }
        let descending = request.sort == .descending
        let result = try page(
            of: records,
            account: account,
            listing: descending ? "history-descending" : "history",
            descending: descending,
            revision: revision
        )
        return HistoryResponse(
            revision: result.revision,
            hasMore: result.hasMore,
            bundleId: configuration.bundleId,
            appAppleId: configuration.appAppleId,
            environment: configuration.environment,
            signedTransactions: result.signed
        )
    }

    private func matches(_ record: SimulatedTransactionRecord, _ request: TransactionHistoryRequest) -> Bool {
        let payload = record.payload
        // History v2 leaves out consumables the app finished, unless they were refunded or revoked.
        if payload.type == .consumable, record.isFinished, payload.revocationDate == nil {
            return false
        }
        if let start = request.startDate, (payload.purchaseDate ?? start) < start {
            return false
        }
        if let end = request.endDate, (payload.purchaseDate ?? end) >= end {
            return false
        }
        if let productIds = request.productIds, !productIds.isEmpty {
            guard let productId = payload.productId, productIds.contains(productId) else { return false }
        }
        if let types = request.productTypes, !types.isEmpty {
            guard let type = Self.historyProductType(payload.type), types.contains(type) else { return false }
        }
        if let groups = request.subscriptionGroupIdentifiers, !groups.isEmpty {
            guard let group = payload.subscriptionGroupIdentifier, groups.contains(group) else { return false }
        }
        if let ownership = request.inAppOwnershipType, payload.inAppOwnershipType != ownership {
            return false
        }
        if let revoked = request.revoked, revoked != (payload.revocationDate != nil) {
            return false
        }
        return true
    }

    private static func historyProductType(_ type: ProductType?) -> TransactionHistoryRequest.ProductType? {
        switch type {
        case .autoRenewableSubscription: .autoRenewable
        case .nonRenewingSubscription: .nonRenewable
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        default: nil
        }
    }

    // MARK: - Get Refund History

    func refundHistory(anyTransactionId: String, revision: String?) throws -> RefundHistoryResponse {
        let accountId = try account(forAnyTransactionId: anyTransactionId)
        guard let account = accounts[accountId] else { throw Self.transactionIdNotFound(anyTransactionId) }
        let records = transactionIdsByAccount[accountId, default: []].compactMap { transactions[$0] }
            .filter { $0.payload.revocationDate != nil }
        let result = try page(of: records, account: account, listing: "refunds", descending: false, revision: revision)
        return RefundHistoryResponse(
            signedTransactions: result.signed,
            revision: result.revision,
            hasMore: result.hasMore
        )
    }

    // MARK: - Get All Subscription Statuses

    func allSubscriptionStatuses(anyTransactionId: String, status: [SubscriptionStatus]?) throws -> StatusResponse {
        let accountId = try account(forAnyTransactionId: anyTransactionId)
        let wanted = status.flatMap { $0.isEmpty ? nil : Set($0) }
        let owned = subscriptions.values
            .filter { $0.account == accountId }
            .filter { wanted?.contains($0.status) ?? true }
        let groups = Dictionary(grouping: owned, by: \.groupId)
        var data: [SubscriptionGroupIdentifierItem] = []
        for groupId in groups.keys.sorted() {
            let members = groups[groupId, default: []].sorted {
                Self.numericOrder($0.originalTransactionId, $1.originalTransactionId)
            }
            let items = try members.map { subscription in
                LastTransactionsItem(
                    status: subscription.status,
                    originalTransactionId: subscription.originalTransactionId,
                    signedTransactionInfo: try signedTransaction(id: subscription.latestTransactionId)
                        .signedTransaction,
                    signedRenewalInfo: try signedRenewal(subscription).signedRenewalInfo
                )
            }
            data.append(SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: groupId, lastTransactions: items))
        }
        return StatusResponse(
            environment: configuration.environment,
            bundleId: configuration.bundleId,
            appAppleId: configuration.appAppleId,
            data: data
        )
    }

    // MARK: - Look Up Order ID

    func lookUpOrder(orderId: String) throws -> OrderLookupResponse {
        let records = transactions.values.filter { $0.orderId == orderId && $0.sharedFrom == nil }
            .sorted { Self.numericOrder($0.id, $1.id) }
        guard !records.isEmpty else {
            return OrderLookupResponse(status: .invalid, signedTransactions: [])
        }
        return OrderLookupResponse(
            status: .valid,
            signedTransactions: try records.map { try signed($0).signedTransaction }
        )
    }

    // MARK: - Finish Transaction

    mutating func finishTransaction(transactionId: String) throws {
        guard !transactionId.isEmpty, transactionId.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw Self.invalidTransactionId(transactionId)
        }
        guard transactions[transactionId] != nil else {
            throw Self.transactionIdNotFound(transactionId)
        }
        transactions[transactionId]?.isFinished = true
    }
}

extension SimulatedAppStoreEngine {
    /// Set App Account Token: the purchase's `appAccountToken` replaced (for a subscription, its renewals' too).
    mutating func setAppAccountToken(originalTransactionId id: String, token: String) throws {
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw Self.invalidTransactionId(id)
        }
        guard let record = transactions[id] else {
            throw Self.transactionIdNotFound(id)
        }
        guard record.payload.originalTransactionId == id else {
            throw Self.apiError(
                status: 400,
                code: 4_000_187,
                "Transaction id \(id) is not an original transaction id."
            )
        }
        guard record.payload.inAppOwnershipType != .familyShared else {
            throw Self.apiError(
                status: 400,
                code: 4_000_185,
                "Transaction \(id) was obtained through Family Sharing, which the endpoint does not support."
            )
        }
        transactions[id]?.payload.appAccountToken = token
        touch(id)
        if subscriptions[id] != nil {
            subscriptions[id]?.appAccountToken = token
        }
    }
}
