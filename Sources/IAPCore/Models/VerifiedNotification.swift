/// A verified App Store Server Notification and the verified signed data nested in it.
///
/// The result of verifying a notification: the notification's own payload plus the transaction, renewal
/// information and app transaction carried in it as separate JWS, each verified with the same checks. A
/// nested value is `nil` when the notification does not carry it.
public struct VerifiedNotification: Sendable, Hashable {
    /// The decoded notification.
    public var payload: NotificationPayload
    /// The transaction from `data.signedTransactionInfo`, verified.
    public var transaction: TransactionPayload?
    /// The renewal information from `data.signedRenewalInfo`, verified.
    public var renewalInfo: RenewalInfoPayload?
    /// The app transaction from `appData.signedAppTransactionInfo`, verified.
    public var appTransaction: AppTransactionPayload?

    /// Creates a verified notification.
    ///
    /// - Parameters:
    ///   - payload: The decoded notification.
    ///   - transaction: The verified nested transaction, if any.
    ///   - renewalInfo: The verified nested renewal information, if any.
    ///   - appTransaction: The verified nested app transaction, if any.
    public init(
        payload: NotificationPayload,
        transaction: TransactionPayload? = nil,
        renewalInfo: RenewalInfoPayload? = nil,
        appTransaction: AppTransactionPayload? = nil
    ) {
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
    }
}
