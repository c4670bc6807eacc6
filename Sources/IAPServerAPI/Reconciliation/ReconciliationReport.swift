public import IAPCore
/// What one reconciliation of a customer found and repaired.
///
/// Every transaction id Apple answered with a valid signature is in ``appleTransactions``, and in exactly one of
/// ``alreadyDelivered``, ``deliveredNow``, ``revokedNow``, ``awaitingOwner`` or ``stillFailing``. Signed data that did
/// not verify is in ``rejectedSignatures`` and nowhere else. What the ledger had missed — a transaction it never
/// recorded, a refund it never applied, a renewal state it never heard of — is also in ``discrepancies``: that, and
/// only that, is what the ``Reconciler``'s alarm counts.
public struct ReconciliationReport: Sendable, Hashable {
    /// Where the transactions came from.
    public enum Source: String, Sendable, Hashable {
        /// Apple's transaction and refund histories (App Store Server API).
        case appStoreHistory
        /// Signed transactions the app uploaded (its `Transaction.all`).
        case clientUpload
    }

    /// A transaction that could not be settled.
    public struct Failure: Sendable, Hashable {
        /// The transaction id.
        public var transactionId: String
        /// Why: a deferred hook, a store failure, an ownership conflict, an unknown product, ...
        public var error: IAPError

        /// Creates a failure.
        public init(transactionId: String, error: IAPError) {
            self.transactionId = transactionId
            self.error = error
        }
    }

    /// Something the ledger had missed, found by a reconciliation: what an alarm names.
    public struct Discrepancy: Sendable, Hashable {
        /// What the ledger had missed.
        public enum Kind: String, Sendable, Hashable {
            /// Apple sold it and the ledger never recorded it: a lost order (or a lost renewal).
            case notRecorded
            /// Apple refunded or revoked it and the ledger had not taken it back: a lost refund notification.
            case refundNotApplied
            /// The subscription's renewal state (auto-renew, billing retry, grace period, next product) changed and
            /// the ledger never heard: a lost renewal notification such as `DID_FAIL_TO_RENEW`.
            case renewalStateChanged
        }

        /// What the ledger had missed.
        public var kind: Kind
        /// The transaction; for ``Kind/renewalStateChanged`` the latest transaction of the subscription, if known.
        public var transactionId: String?
        /// The purchase (subscription) the transaction belongs to.
        public var originalTransactionId: String?
        /// The product.
        public var productId: String?
        /// The owner the ledger names now, when it names one.
        public var userId: String?
        /// What the run did about it: the pipeline's outcome (`delivered`, `awaitingOwner`, `revoked`, `deferred`,
        /// `rejected`, ...), or `stored` for a renewal state.
        public var repair: String

        /// Creates a discrepancy.
        public init(
            kind: Kind,
            transactionId: String?,
            originalTransactionId: String?,
            productId: String?,
            userId: String?,
            repair: String
        ) {
            self.kind = kind
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId
            self.productId = productId
            self.userId = userId
            self.repair = repair
        }
    }

    /// Signed data that did not verify.
    public struct Rejection: Sendable, Hashable {
        /// The position of the signed data in its page or upload (0-based).
        public var index: Int
        /// The failed check.
        public var error: IAPError

        /// Creates a rejection.
        public init(index: Int, error: IAPError) {
            self.index = index
            self.error = error
        }
    }

    /// The customer as asked: a transaction id or a user id.
    public var customer: String
    /// The key the checkpoint is stored under (an original transaction id), or `nil` for an upload.
    public var customerKey: String?
    /// Where the transactions came from.
    public var source: Source
    /// The transaction history revision the run started from (`nil`: the whole history).
    public var startRevision: String?
    /// How many App Store Server API requests the run made: history pages and subscription statuses.
    public var requests: Int = 0
    /// Of ``requests``, how many were Get All Subscription Statuses.
    public var subscriptionStatusRequests: Int = 0
    /// Every transaction id with a valid signature, in the order seen.
    public var appleTransactions: [String] = []
    /// Transactions the ledger had settled already (delivered, or revoked and taken back).
    public var alreadyDelivered: [String] = []
    /// Transactions the ledger lacked or had not delivered, delivered now.
    public var deliveredNow: [String] = []
    /// Transactions Apple refunded or revoked that the ledger had not taken back, taken back (or recorded revoked) now.
    public var revokedNow: [String] = []
    /// Transactions recorded now that wait for a user to claim them (no user bound to their appAccountToken).
    public var awaitingOwner: [String] = []
    /// Transactions that could not be settled, with the error each.
    public var stillFailing: [Failure] = []
    /// Signed data that did not verify, or whose verification did not finish (a retryable `internalError`).
    public var rejectedSignatures: [Rejection] = []
    /// The subscriptions (by original transaction id) whose renewal state changed with the newest signed renewal info
    /// from Get All Subscription Statuses, recorded now.
    public var renewalInfosUpdated: [String] = []
    /// What the ledger had missed, and what the run did about each.
    public var discrepancies: [Discrepancy] = []
    /// Whether the run saved its revisions, so that the next run starts from them. It does not when anything
    /// failed or was rejected, so the next run reads the same changes again.
    public var checkpointSaved = false

    /// Creates an empty report.
    ///
    /// - Parameters:
    ///   - customer: The customer as asked.
    ///   - customerKey: The checkpoint key.
    ///   - source: Where the transactions come from.
    ///   - startRevision: The revision the run starts from.
    public init(customer: String, customerKey: String?, source: Source, startRevision: String? = nil) {
        self.customer = customer
        self.customerKey = customerKey
        self.source = source
        self.startRevision = startRevision
    }

    /// How many things the ledger had missed (``discrepancies``): transactions it never recorded, refunds it never
    /// applied, renewal states it never heard of. The ``Reconciler`` raises its alarm when it exceeds the threshold.
    ///
    /// What the ledger knew but had not finished — a grant waiting for a retry, a purchase waiting for its owner — is
    /// not a discrepancy, even when this run settles it: the ledger lost nothing.
    public var discrepancy: Int {
        discrepancies.count
    }

    /// Whether Apple and the ledger agree now: nothing failed and nothing was rejected.
    public var isClean: Bool {
        stillFailing.isEmpty && rejectedSignatures.isEmpty
    }
}

extension ReconciliationReport: CustomStringConvertible {
    /// One line for logs, such as
    /// `reconciliation of alice (appStoreHistory): 5 from Apple, 3 already settled, 1 delivered now, 0 revoked now,
    /// 1 awaiting owner, 0 failing, 0 rejected signatures, checkpoint saved`.
    public var description: String {
        "reconciliation of \(customer) (\(source.rawValue)): \(appleTransactions.count) from Apple, "
            + "\(alreadyDelivered.count) already settled, \(deliveredNow.count) delivered now, "
            + "\(revokedNow.count) revoked now, \(awaitingOwner.count) awaiting owner, \(stillFailing.count) failing, "
            + "\(rejectedSignatures.count) rejected signatures, \(renewalInfosUpdated.count) renewal states updated, "
            + "checkpoint \(checkpointSaved ? "saved" : "not saved")"
    }
}

extension ReconciliationReport.Discrepancy: CustomStringConvertible {
    /// One line for people, such as `2000000000000004 (coins.100 of bob) was not in the ledger: delivered now` or
    /// `subscription 2000000000000003 (pro.monthly of bob): its renewal state changed and the ledger never heard:
    /// recorded now`.
    public var description: String {
        let what = [productId, userId.map { "of \($0)" }].compactMap { $0 }
        let detail = what.isEmpty ? "" : " (\(what.joined(separator: " ")))"
        let repaired: String =
            switch repair {
            case "delivered": "delivered now"
            case "revoked": "taken back now"
            case "awaitingOwner": "recorded now, waiting for its owner"
            case "stored": "recorded now"
            default: "not repaired (\(repair))"
            }
        switch kind {
        case .notRecorded:
            return "\(transactionId ?? "?")\(detail) was not in the ledger: \(repaired)"
        case .refundNotApplied:
            return "\(transactionId ?? "?")\(detail) was refunded and the ledger had not taken it back: \(repaired)"
        case .renewalStateChanged:
            return "subscription \(originalTransactionId ?? "?")\(detail): its renewal state changed and the ledger "
                + "never heard: \(repaired)"
        }
    }
}
