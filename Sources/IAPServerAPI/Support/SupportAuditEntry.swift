#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// One entry of the support audit log: who did what, when, to which order, and how it ended — chained to the entry
/// before it.
///
/// The caller fills in what happened (``at``, ``actor``, ``action``, ``orderId``, ``userId``, ``outcomes``); the
/// log fills in the rest when it appends the entry (``SupportAuditChain/seal(_:after:)``): its number
/// (``sequence``), the SHA-256 of the entry before it (``previousHash``), and the operating-system user of the
/// process that wrote it (``osUser``), whatever the entry said.
public struct SupportAuditEntry: Codable, Sendable, Hashable {
    /// What one transaction's action ended in.
    public struct Outcome: Codable, Sendable, Hashable {
        /// The transaction id.
        public var transactionId: String
        /// The delivery outcome's name (`delivered`, `alreadyDelivered`, `pending`, `deferred`, `revoked`,
        /// `rejected`), `requested` in the entry written before a redelivery, or `shown` in a lookup's entry.
        public var outcome: String
        /// The error code and message, for a failure.
        public var error: String?
        /// The product, when the transaction verified.
        public var productId: String?
        /// For a transaction delivered now: the user it was granted to.
        public var userId: String?
        /// For a transaction delivered now: the units the fulfillment hook was asked to grant (consumable units, or 1).
        public var units: Int64?

        /// Creates an outcome.
        ///
        /// - Parameters:
        ///   - transactionId: The transaction id.
        ///   - outcome: The delivery outcome's name, or `requested`.
        ///   - error: The error code and message of a failure.
        ///   - productId: The product.
        ///   - userId: For a transaction delivered now, its user.
        ///   - units: For a transaction delivered now, the units granted.
        public init(
            transactionId: String,
            outcome: String,
            error: String? = nil,
            productId: String? = nil,
            userId: String? = nil,
            units: Int64? = nil
        ) {
            self.transactionId = transactionId
            self.outcome = outcome
            self.error = error
            self.productId = productId
            self.userId = userId
            self.units = units
        }
    }

    /// When.
    public var at: Date
    /// Who: the support agent or tool that acted, as named to the tool (`--operator`).
    public var actor: String
    /// What: `lookup` for a lookup, `redeliver.requested` before the deliveries, `redeliver.completed` after,
    /// `audit.reseal` for an operator's reseal of the audit (``reseal``).
    public var action: String
    /// The order id from the customer's receipt; empty for a reseal.
    public var orderId: String
    /// The user the deliveries were asked for, if the agent named one.
    public var userId: String?
    /// Per transaction, what happened (for a lookup, what was shown).
    public var outcomes: [Outcome]
    /// The path grants took: how the delivery pipeline's fulfillment hook reaches the customer, such as
    /// `webhook wallet.example.com` or `ledger-only` (the ledger is the entitlement source); `nil` when not told.
    public var fulfillment: String?
    /// The entry's number in its log: 1 for the first, one more for each next; set by the log.
    public var sequence: Int
    /// The SHA-256, in lowercase hexadecimal, of the entry before this one as the log stores it; for the first
    /// entry, the ledger's anchor (``SupportAuditChain/anchor(ledgerId:)``). Set by the log; empty in an entry
    /// written before the log was chained.
    public var previousHash: String
    /// The operating-system user of the process that wrote the entry (`getpwuid(geteuid())`), set by the log.
    public var osUser: String?
    /// For a reseal (action `audit.reseal`): why, and what was found; `nil` for every other entry.
    public var reseal: Reseal?

    /// What an operator's reseal (`iap support audit reseal`) found and why it was done: the entry that lets support
    /// write to an audit again after it was found not to match the ledger's head.
    public struct Reseal: Codable, Sendable, Hashable {
        /// Why, as the operator said it (`--reason`).
        public var reason: String
        /// The head the ledger kept, or `nil` when it kept none.
        public var ledgerHead: SupportAuditHead?
        /// The head of the log as found: its entry count and its last entry's hash.
        public var logHead: SupportAuditHead
        /// The head the log kept beside it, or `nil` when it had none.
        public var recordedHead: SupportAuditHead?
        /// What checking the log against the ledger found, one message a problem.
        public var problems: [String]

        /// Creates the record of a reseal.
        ///
        /// - Parameters:
        ///   - reason: Why.
        ///   - ledgerHead: The head the ledger kept.
        ///   - logHead: The head of the log as found.
        ///   - recordedHead: The head the log kept beside it.
        ///   - problems: What was found.
        public init(
            reason: String,
            ledgerHead: SupportAuditHead?,
            logHead: SupportAuditHead,
            recordedHead: SupportAuditHead?,
            problems: [String]
        ) {
            self.reason = reason
            self.ledgerHead = ledgerHead
            self.logHead = logHead
            self.recordedHead = recordedHead
            self.problems = problems
        }
    }

    /// Creates an entry, for a log to seal.
    ///
    /// - Parameters:
    ///   - at: When.
    ///   - actor: Who.
    ///   - action: What.
    ///   - orderId: The order id.
    ///   - userId: The user named, if any.
    ///   - outcomes: Per transaction, what happened.
    public init(at: Date, actor: String, action: String, orderId: String, userId: String?, outcomes: [Outcome]) {
        self.at = at
        self.actor = actor
        self.action = action
        self.orderId = orderId
        self.userId = userId
        self.outcomes = outcomes
        self.sequence = 0
        self.previousHash = ""
        self.osUser = nil
        self.reseal = nil
    }

    private enum CodingKeys: String, CodingKey {
        case at, actor, action, orderId, userId, outcomes, fulfillment, sequence, previousHash, osUser, reseal
    }

    /// Decodes an entry; one written before the log was chained has no ``sequence`` (0) and no ``previousHash``, one
    /// written before grants were named has no ``fulfillment``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        at = try container.decode(Date.self, forKey: .at)
        actor = try container.decode(String.self, forKey: .actor)
        action = try container.decode(String.self, forKey: .action)
        orderId = try container.decode(String.self, forKey: .orderId)
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        outcomes = try container.decode([Outcome].self, forKey: .outcomes)
        fulfillment = try container.decodeIfPresent(String.self, forKey: .fulfillment)
        sequence = try container.decodeIfPresent(Int.self, forKey: .sequence) ?? 0
        previousHash = try container.decodeIfPresent(String.self, forKey: .previousHash) ?? ""
        osUser = try container.decodeIfPresent(String.self, forKey: .osUser)
        reseal = try container.decodeIfPresent(Reseal.self, forKey: .reseal)
    }
}
