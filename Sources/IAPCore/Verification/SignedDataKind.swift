/// The kinds of signed data the App Store produces.
public enum SignedDataKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A signed transaction (`JWSTransaction`).
    case transaction
    /// A signed subscription renewal info (`JWSRenewalInfo`).
    case renewal
    /// An App Store Server Notification V2 `signedPayload`.
    case notification
    /// A signed app transaction (`AppTransaction`).
    case appTransaction = "app-transaction"
}

extension SignedDataKind {
    /// The kind in words: `transaction`, `renewal info`, `notification`, `app transaction`.
    public var displayName: String {
        switch self {
        case .transaction: "transaction"
        case .renewal: "renewal info"
        case .notification: "notification"
        case .appTransaction: "app transaction"
        }
    }
}

/// Verified signed data of any kind.
public enum VerifiedSignedData: Sendable, Hashable {
    /// A verified transaction.
    case transaction(TransactionPayload)
    /// A verified renewal info.
    case renewal(RenewalInfoPayload)
    /// A verified notification with its verified nested signed data.
    case notification(VerifiedNotification)
    /// A verified app transaction.
    case appTransaction(AppTransactionPayload)

    /// The kind of the data.
    public var kind: SignedDataKind {
        switch self {
        case .transaction: .transaction
        case .renewal: .renewal
        case .notification: .notification
        case .appTransaction: .appTransaction
        }
    }
}
