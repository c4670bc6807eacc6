#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// One thing that happened, for operations: what a log line, a metric or an alert is made of.
///
/// Events name the product, transaction, original transaction, user and environment a support engineer searches
/// by, the outcome and the error code. ``message`` carries the operator's detail (it may name users; it never holds
/// a secret). Events go to an ``EventSink``, never to a client.
public struct IAPEvent: Sendable, Hashable, Codable {
    /// When it happened.
    public var time: Date
    /// What happened, dotted: `submission.delivered`, `submission.rejected`, `notification.processed`, ...
    public var event: String
    /// The business user.
    public var userId: String?
    /// The product.
    public var productId: String?
    /// The transaction.
    public var transactionId: String?
    /// The purchase the transaction belongs to.
    public var originalTransactionId: String?
    /// `Production`, `Sandbox`, ...
    public var environment: String?
    /// The outcome, in the words of the component (`delivered`, `deferred`, `rejected`, ...).
    public var outcome: String?
    /// The ``IAPError/Code`` of a failure.
    public var errorCode: String?
    /// The operator's detail.
    public var message: String?
    /// How long it took, in milliseconds.
    public var durationMs: Int64?
    /// For a support action (`support.lookup`, `support.redeliver`, `support.audit`): the SHA-256 of the support
    /// audit's last entry after the action's entry was appended, to keep beside the log; `nil` otherwise.
    public var auditHead: String?
    /// Where a server listens (`http://127.0.0.1:8080`, the bound port when port 0 was asked), for `server.started`;
    /// `nil` otherwise.
    public var address: String?
    /// For a `notification.*` event: the App Store notification's `notificationType`, such as `DID_RENEW`; `nil` when
    /// it did not verify.
    public var notificationType: String?
    /// For a `notification.*` event: the notification's `subtype`, such as `BILLING_RECOVERY`, when it has one.
    public var notificationSubtype: String?

    /// Creates an event.
    public init(
        time: Date,
        event: String,
        userId: String? = nil,
        productId: String? = nil,
        transactionId: String? = nil,
        originalTransactionId: String? = nil,
        environment: String? = nil,
        outcome: String? = nil,
        errorCode: String? = nil,
        message: String? = nil,
        durationMs: Int64? = nil,
        auditHead: String? = nil,
        address: String? = nil,
        notificationType: String? = nil,
        notificationSubtype: String? = nil
    ) {
        self.time = time
        self.event = event
        self.userId = userId
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.outcome = outcome
        self.errorCode = errorCode
        self.message = message
        self.durationMs = durationMs
        self.auditHead = auditHead
        self.address = address
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
    }
}
