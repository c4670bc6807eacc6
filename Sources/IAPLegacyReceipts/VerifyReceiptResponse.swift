import IAPCore
/// The answer of Apple's deprecated `verifyReceipt` endpoint, with the fields a migration to the App Store
/// Server API needs.
///
/// Apple's field names are kept in the JSON form. The transaction identifiers in it come from Apple, so they
/// can be trusted as far as the TLS connection to Apple can; still, the App Store Server API is the source to
/// deliver from.
public struct VerifyReceiptResponse: Codable, Hashable, Sendable {
    /// `status`: 0 when the receipt is valid; see ``VerifyReceiptStatus``.
    public var status: Int
    /// `environment`: `Production` or `Sandbox`.
    public var environment: String?
    /// `receipt`: the decoded receipt that was sent.
    public var receipt: VerifyReceiptAppReceipt?
    /// `latest_receipt_info`: every in-app purchase transaction, for apps with auto-renewable subscriptions.
    public var latestReceiptInfo: [VerifyReceiptTransaction]?
    /// `latest_receipt`: the latest base64-encoded receipt, for apps with auto-renewable subscriptions.
    public var latestReceipt: String?
    /// `pending_renewal_info`: the renewal state of each auto-renewable subscription.
    public var pendingRenewalInfo: [VerifyReceiptPendingRenewal]?
    /// `is-retryable`: Apple's hint, sent with some internal errors.
    public var isRetryable: Bool?

    enum CodingKeys: String, CodingKey {
        case status
        case environment
        case receipt
        case latestReceiptInfo = "latest_receipt_info"
        case latestReceipt = "latest_receipt"
        case pendingRenewalInfo = "pending_renewal_info"
        case isRetryable = "is-retryable"
    }

    /// Creates a value from its fields.
    public init(
        status: Int,
        environment: String? = nil,
        receipt: VerifyReceiptAppReceipt? = nil,
        latestReceiptInfo: [VerifyReceiptTransaction]? = nil,
        latestReceipt: String? = nil,
        pendingRenewalInfo: [VerifyReceiptPendingRenewal]? = nil,
        isRetryable: Bool? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceiptInfo = latestReceiptInfo
        self.latestReceipt = latestReceipt
        self.pendingRenewalInfo = pendingRenewalInfo
        self.isRetryable = isRetryable
    }

    /// Every original transaction identifier in the answer, in order of first appearance, without repeats: the
    /// identifiers to look the customer up with in the App Store Server API.
    public var originalTransactionIds: [String] {
        var seen = Set<String>()
        var result: [String] = []
        let transactions = (latestReceiptInfo ?? []) + (receipt?.inApp ?? [])
        let candidates =
            transactions.compactMap(\.originalTransactionId)
            + (pendingRenewalInfo ?? []).compactMap(\.originalTransactionId)
        for id in candidates where seen.insert(id).inserted {
            result.append(id)
        }
        return result
    }
}
