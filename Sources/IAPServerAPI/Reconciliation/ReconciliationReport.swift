public import IAPCore
/// What one reconciliation of a customer found and repaired.
///
/// Every transaction id Apple answered with a valid signature is in ``appleTransactions``, and in exactly one of
/// ``alreadyDelivered``, ``deliveredNow``, ``revokedNow``, ``awaitingOwner`` or ``stillFailing``. Signed data that did
/// not verify is in ``rejectedSignatures`` and nowhere else.
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
    /// How many App Store Server API pages the run fetched.
    public var requests: Int = 0
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

    /// How many of Apple's transactions the ledger had not settled before this run: what the run repaired,
    /// recorded for an owner, or failed to settle. The ``Reconciler`` raises its alarm when it exceeds the threshold.
    public var discrepancy: Int {
        deliveredNow.count + revokedNow.count + awaitingOwner.count + stillFailing.count
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
            + "\(rejectedSignatures.count) rejected signatures, checkpoint \(checkpointSaved ? "saved" : "not saved")"
    }
}
