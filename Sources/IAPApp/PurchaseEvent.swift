public import IAPCore
/// Something that happened to a purchase: a delivery (from a purchase call, the outbox or the store's updates), a
/// refund, a rejection. Purchases that complete later (Ask to Buy, another device, a retried delivery) are reported
/// only here.
public enum PurchaseEvent: Sendable, Hashable {
    /// The server confirmed delivery and the store's transaction is finished.
    case delivered(PurchaseHistoryItem)
    /// The App Store refunded or revoked a purchase, and the server recorded it.
    case revoked(PurchaseHistoryItem)
    /// A submission did not settle; the purchase stays in the outbox.
    case deferred(transactionId: String, IAPError)
    /// The server refused a purchase; it stays unfinished and in the outbox.
    case rejected(transactionId: String, IAPError)
    /// A transaction from the store could not be read.
    case unreadable(IAPError)
    /// The outbox could not be read (damaged, or written by a newer version) and was moved aside; purchases go on
    /// with an empty outbox, and the store hands the purchases it held to the app again.
    case outboxQuarantined(OutboxQuarantine)
    /// The outbox's storage could neither be read nor moved aside: purchases go on with an outbox in memory only,
    /// until the next launch (see ``OutboxStatus/isDurable``).
    case outboxUnavailable(IAPError)
}
