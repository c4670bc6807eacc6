#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A purchase the server has not confirmed yet, kept in the outbox with its context until it has.
public struct PurchaseOutboxEntry: Sendable, Hashable, Codable {
    /// Where the entry stands.
    public enum State: String, Sendable, Hashable, Codable {
        /// Waiting for the server to confirm delivery; submitted again with backoff.
        case awaitingDelivery
        /// The server confirmed; only finishing the store's transaction is left.
        case confirmed
        /// The server refused it (a verification or configuration failure). The store's transaction stays
        /// unfinished; it is submitted again with backoff, so a fixed server still delivers it.
        case rejected
    }

    /// The App Store transaction id.
    public var transactionId: String
    /// The product id.
    public var productId: String
    /// The JWS to submit.
    public var signedTransaction: String
    /// The business user, or `nil` when it is resolved at submission (the signed-in user, or the server's
    /// appAccountToken binding).
    public var userId: String?
    /// The business order id, if the purchase was made for one.
    public var orderId: String?
    /// When the entry was added.
    public var enqueuedAt: Date
    /// Submissions so far.
    public var attempts: Int
    /// When the next automatic submission is due; `nil` for at once.
    public var nextAttemptAt: Date?
    /// Where the entry stands.
    public var state: State
    /// The code of the last failure, if any.
    public var lastErrorCode: String?
    /// The message of the last failure, if any.
    public var lastErrorMessage: String?

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - transactionId: The transaction id.
    ///   - productId: The product id.
    ///   - signedTransaction: The JWS.
    ///   - userId: The business user, if known.
    ///   - orderId: The business order id, if any.
    ///   - enqueuedAt: When it was added.
    public init(
        transactionId: String,
        productId: String,
        signedTransaction: String,
        userId: String?,
        orderId: String?,
        enqueuedAt: Date
    ) {
        self.transactionId = transactionId
        self.productId = productId
        self.signedTransaction = signedTransaction
        self.userId = userId
        self.orderId = orderId
        self.enqueuedAt = enqueuedAt
        self.attempts = 0
        self.nextAttemptAt = nil
        self.state = .awaitingDelivery
        self.lastErrorCode = nil
        self.lastErrorMessage = nil
    }

    /// The last failure, if any.
    public var lastError: IAPError? {
        lastErrorCode.map { IAPError(IAPError.Code($0), lastErrorMessage) }
    }

    /// Whether the server's last answer asked for the customer to sign in again (401 or 403): the entry is submitted
    /// again after ``PurchaseCoordinator/signIn(_:)``.
    public var isAwaitingAuthentication: Bool {
        state == .awaitingDelivery && lastErrorCode == IAPError.Code.authenticationRequired.rawValue
    }
}
