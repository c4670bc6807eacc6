#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Where a recorded transaction is on its way to the customer.
public enum DeliveryState: String, Codable, Sendable, Hashable, CaseIterable {
    /// Recorded; the fulfillment hook has not confirmed it yet (new, or claimed by a deliverer).
    case pending
    /// Settled: the fulfillment hook carried out what the entry currently calls for — the grant, or after a
    /// revocation the take-back. A purchase revoked before it was ever granted is settled without a call.
    case delivered
    /// The hook failed; a retry is due at ``LedgerEntry/nextAttemptAt``.
    case retrying
    /// The hook failed too often; it waits for a person (visible, never dropped).
    case deadLettered
    /// Recorded under its appAccountToken, which no user has claimed yet (the App Store told the server
    /// before the app did); nothing is granted until a user presents the transaction with that token.
    case awaitingOwner
    /// Recorded, but parked: the catalog does not know its product, and a product is never granted by guess. Nothing
    /// is granted until the catalog names it (``DeliveryPipeline/releaseParked(limit:)``, which `iap serve` runs at
    /// start and on `SIGHUP`); never due for the retry queue.
    case unknownProduct
}

/// One transaction in the ledger: the verified App Store transaction, whose it is, and how far its
/// delivery and any revocation got.
///
/// A ledger entry holds the verified, decoded payload; the signed JWS it was verified from is kept by the store
/// beside it (``EntitlementStore/signedTransaction(transactionId:)``), not in the entry, so that a large ledger need
/// not hold every JWS in memory.
public struct LedgerEntry: Codable, Sendable, Hashable {
    /// The App Store transaction id: the ledger's key.
    public var transactionId: String
    /// The original transaction id (a subscription's or a restored purchase's first transaction).
    public var originalTransactionId: String
    /// The business user who owns the purchase.
    public var userId: String
    /// The App Store product id.
    public var productId: String
    /// The verified transaction as the App Store signed it.
    public var transaction: TransactionPayload
    /// The business order id the app attached, if any.
    public var orderId: String?
    /// Where the delivery is.
    public var deliveryState: DeliveryState
    /// How many times the fulfillment hook was called for the grant.
    public var deliveryAttempts: Int
    /// When the next delivery attempt is due (for `retrying`), or until when a deliverer holds its
    /// claim (for a claimed `pending` entry).
    public var nextAttemptAt: Date?
    /// The last delivery failure, for people.
    public var lastError: String?
    /// When the entry was first recorded.
    public var recordedAt: Date
    /// When the hook confirmed the grant.
    public var deliveredAt: Date?
    /// When the App Store revoked the transaction (refund, family sharing removed), or the server withdrew its access
    /// after a parent rescinded consent (``consentRescindedAt``), if either happened.
    public var revokedAt: Date?
    /// Whether the revoke hook confirmed taking the purchase back.
    public var revocationDelivered: Bool
    /// How many times the purchase was granted again after a reversed refund; part of the idempotency key
    /// the fulfillment hook sees, so a re-grant is never mistaken for the first grant.
    public var grantGeneration: Int
    /// Whether the grant hook was called in this generation (it may have applied even if it never
    /// confirmed), so a later revocation knows it must call the revoke hook.
    public var grantAttempted: Bool
    /// The units the grant hook was asked to give, so a revocation takes back exactly those.
    public var grantedUnits: Int64?
    /// For a prorated refund of a non-consumable or a subscription: whether it keeps the purchase's access, as the
    /// ``ProratedRefundPolicy`` in force decided when the refund was processed (and as the take-back's
    /// ``Delivery/accessKept`` told the fulfillment). Decided once, for good: a restart under another policy changes
    /// new refunds only. `nil` for anything else, and for refunds an earlier version recorded (the policy in force
    /// decides those).
    public var refundAccessKept: Bool?
    /// When an operator gave this dead letter up (the console's `Give up`, written to the support audit with who did
    /// it): it stays `deadLettered` and undelivered, never attempted again by the retry queue, but no longer counts
    /// among the dead letters waiting for a person (``LedgerStatistics/deadLetters``; it counts in
    /// ``LedgerStatistics/givenUp``). `nil` for every other entry; a redelivery clears it
    /// (``DeliveryPipeline/giveUp(transactionId:)``).
    public var givenUpAt: Date?
    /// When the server withdrew the purchase's access because a parent rescinded consent for the Apple Account that
    /// made it (`RESCIND_CONSENT`, with ``DeliveryPipeline/rescindConsent(appTransactionId:)``): it grants nothing from
    /// then on, whatever the App Store later signs about it (``revokedAt`` is set too, and kept), and a renewal of the
    /// same subscription is recorded withdrawn as well. `nil` for every other entry.
    public var consentRescindedAt: Date?
    /// The store's insertion order: unique, increasing, assigned by the store on insert.
    public var sequence: Int64
    /// Bumped by the store on every change; the compare-and-set key of ``EntitlementStore/replace(_:ifRevision:)``.
    public var revision: Int64

    /// Creates an entry, as the delivery pipeline records it (the store assigns `sequence` and `revision`).
    public init(
        transaction: TransactionPayload,
        transactionId: String,
        originalTransactionId: String,
        userId: String,
        productId: String,
        orderId: String? = nil,
        recordedAt: Date
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.userId = userId
        self.productId = productId
        self.transaction = transaction
        self.orderId = orderId
        self.deliveryState = .pending
        self.deliveryAttempts = 0
        self.nextAttemptAt = nil
        self.lastError = nil
        self.recordedAt = recordedAt
        self.deliveredAt = nil
        self.revokedAt = nil
        self.revocationDelivered = false
        self.grantGeneration = 0
        self.grantAttempted = false
        self.grantedUnits = nil
        self.refundAccessKept = nil
        self.givenUpAt = nil
        self.consentRescindedAt = nil
        self.sequence = 0
        self.revision = 0
    }
}

extension LedgerEntry {
    /// The App Store environment the transaction was made in (`Production`, `Sandbox`, ...), as its signed data
    /// says; `nil` when the verifier did not check it and the data names none.
    ///
    /// A production server that also accepts the sandbox (for App Review) keeps the two apart by it: see
    /// ``SandboxPolicy``.
    public var environment: AppStoreEnvironment? {
        transaction.environment
    }
}

extension LedgerEntry {
    /// The user who owns the purchase, or `nil` while nobody does: the entry waits for its owner (recorded under
    /// its appAccountToken) or is recorded for `unowned:<transactionId>` (``DeliveryPipeline/unownedPrefix``).
    public var owner: String? {
        deliveryState == .awaitingOwner || userId.hasPrefix(DeliveryPipeline.unownedPrefix) ? nil : userId
    }
}

extension LedgerEntry: CustomStringConvertible {
    /// One line for logs, such as `transaction 2000000000000001 (coins.100) of alice, Sandbox, delivered, revoked`.
    public var description: String {
        var parts = ["transaction \(transactionId) (\(productId)) of \(userId)"]
        if let environment {
            parts.append(environment.rawValue)
        }
        parts.append(deliveryState.rawValue)
        if revokedAt != nil {
            parts.append(revocationDelivered ? "revoked" : "revoked, take-back owed")
        }
        return parts.joined(separator: ", ")
    }
}

/// The outcome of ``EntitlementStore/insert(_:signedTransaction:)``.
public enum InsertOutcome: Sendable, Hashable {
    /// The entry was new and is now stored, with its sequence and revision assigned.
    case inserted(LedgerEntry)
    /// An entry with the same transaction id was already stored; it is returned unchanged.
    case existing(LedgerEntry)
}

/// The outcome of ``EntitlementStore/bind(appAccountToken:to:)``.
public enum BindingOutcome: Sendable, Hashable {
    /// The token was unbound and is now bound to the user.
    case bound
    /// The token was already bound to the same user.
    case alreadyBound
    /// The token is bound to another user; nothing changed.
    case conflict(existingUserId: String)
}

/// One page of a user's history, newest first.
public struct LedgerPage: Sendable, Hashable {
    /// The entries, newest first.
    public var entries: [LedgerEntry]
    /// The cursor for the next (older) page, or `nil` when this is the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(entries: [LedgerEntry], nextCursor: String?) {
        self.entries = entries
        self.nextCursor = nextCursor
    }
}

/// Counts over the whole ledger.
public struct LedgerStatistics: Codable, Sendable, Hashable {
    /// Recorded transactions.
    public var transactions: Int
    /// Transactions whose grant was confirmed.
    public var delivered: Int
    /// Transactions waiting for a retry.
    public var pendingRetries: Int
    /// Transactions that failed too often, waiting for a person (those an operator gave up are in ``givenUp``).
    public var deadLetters: Int
    /// Dead letters an operator gave up (``LedgerEntry/givenUpAt``).
    public var givenUp: Int
    /// Transactions parked because the catalog does not know their product (``DeliveryState/unknownProduct``).
    public var unknownProduct: Int
    /// Revoked transactions.
    public var revoked: Int
    /// Distinct users.
    public var users: Int
    /// Transactions per App Store environment (`"Production"`, `"Sandbox"`, ...), from each transaction's signed
    /// data; an environment is present only when it has a transaction. Transactions whose data names no environment
    /// are not counted here.
    public var environments: [String: Int]

    /// Creates statistics.
    public init(
        transactions: Int,
        delivered: Int,
        pendingRetries: Int,
        deadLetters: Int,
        revoked: Int,
        users: Int,
        environments: [String: Int] = [:],
        unknownProduct: Int = 0,
        givenUp: Int = 0
    ) {
        self.transactions = transactions
        self.delivered = delivered
        self.pendingRetries = pendingRetries
        self.deadLetters = deadLetters
        self.revoked = revoked
        self.users = users
        self.environments = environments
        self.unknownProduct = unknownProduct
        self.givenUp = givenUp
    }

    private enum CodingKeys: String, CodingKey {
        case transactions, delivered, pendingRetries, deadLetters, revoked, users, environments, unknownProduct
        case givenUp
    }

    /// Decodes statistics; `environments`, `unknownProduct` and `givenUp`, added later, are empty and 0 when absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transactions = try container.decode(Int.self, forKey: .transactions)
        delivered = try container.decode(Int.self, forKey: .delivered)
        pendingRetries = try container.decode(Int.self, forKey: .pendingRetries)
        deadLetters = try container.decode(Int.self, forKey: .deadLetters)
        revoked = try container.decode(Int.self, forKey: .revoked)
        users = try container.decode(Int.self, forKey: .users)
        environments = try container.decodeIfPresent([String: Int].self, forKey: .environments) ?? [:]
        unknownProduct = try container.decodeIfPresent(Int.self, forKey: .unknownProduct) ?? 0
        givenUp = try container.decodeIfPresent(Int.self, forKey: .givenUp) ?? 0
    }

    /// Encodes statistics; `unknownProduct` only when a purchase is parked and `givenUp` only when a dead letter was
    /// given up, so a ledger without one keeps the shape it always had.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(transactions, forKey: .transactions)
        try container.encode(delivered, forKey: .delivered)
        try container.encode(pendingRetries, forKey: .pendingRetries)
        try container.encode(deadLetters, forKey: .deadLetters)
        try container.encode(revoked, forKey: .revoked)
        try container.encode(users, forKey: .users)
        try container.encode(environments, forKey: .environments)
        if unknownProduct > 0 {
            try container.encode(unknownProduct, forKey: .unknownProduct)
        }
        if givenUp > 0 {
            try container.encode(givenUp, forKey: .givenUp)
        }
    }
}
