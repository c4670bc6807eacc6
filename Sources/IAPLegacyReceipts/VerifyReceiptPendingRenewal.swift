import IAPCore
/// The renewal state of one auto-renewable subscription in a `verifyReceipt` answer: an entry of
/// `pending_renewal_info`.
///
/// Apple's field names are kept in the JSON form; identifiers, flags and dates are strings, as Apple sends them.
public struct VerifyReceiptPendingRenewal: Codable, Hashable, Sendable {
    /// `original_transaction_id`.
    public var originalTransactionId: String?
    /// `product_id`: the product the customer has now.
    public var productId: String?
    /// `auto_renew_product_id`: the product that renews next.
    public var autoRenewProductId: String?
    /// `auto_renew_status`: `"1"` when the subscription renews, `"0"` when the customer turned renewal off.
    public var autoRenewStatus: String?
    /// `expiration_intent`: why the subscription expired.
    public var expirationIntent: String?
    /// `is_in_billing_retry_period`.
    public var isInBillingRetryPeriod: String?
    /// `grace_period_expires_date_ms`.
    public var gracePeriodExpiresDateMs: String?
    /// `price_consent_status`.
    public var priceConsentStatus: String?
    /// `offer_code_ref_name`.
    public var offerCodeRefName: String?
    /// `promotional_offer_id`.
    public var promotionalOfferId: String?

    enum CodingKeys: String, CodingKey {
        case originalTransactionId = "original_transaction_id"
        case productId = "product_id"
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
        case isInBillingRetryPeriod = "is_in_billing_retry_period"
        case gracePeriodExpiresDateMs = "grace_period_expires_date_ms"
        case priceConsentStatus = "price_consent_status"
        case offerCodeRefName = "offer_code_ref_name"
        case promotionalOfferId = "promotional_offer_id"
    }

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        originalTransactionId: String? = nil,
        productId: String? = nil,
        autoRenewProductId: String? = nil,
        autoRenewStatus: String? = nil,
        expirationIntent: String? = nil,
        isInBillingRetryPeriod: String? = nil,
        gracePeriodExpiresDateMs: String? = nil,
        priceConsentStatus: String? = nil,
        offerCodeRefName: String? = nil,
        promotionalOfferId: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDateMs = gracePeriodExpiresDateMs
        self.priceConsentStatus = priceConsentStatus
        self.offerCodeRefName = offerCodeRefName
        self.promotionalOfferId = promotionalOfferId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try container.verifyReceiptString(forKey: .originalTransactionId)
        productId = try container.verifyReceiptString(forKey: .productId)
        autoRenewProductId = try container.verifyReceiptString(forKey: .autoRenewProductId)
        autoRenewStatus = try container.verifyReceiptString(forKey: .autoRenewStatus)
        expirationIntent = try container.verifyReceiptString(forKey: .expirationIntent)
        isInBillingRetryPeriod = try container.verifyReceiptString(forKey: .isInBillingRetryPeriod)
        gracePeriodExpiresDateMs = try container.verifyReceiptString(forKey: .gracePeriodExpiresDateMs)
        priceConsentStatus = try container.verifyReceiptString(forKey: .priceConsentStatus)
        offerCodeRefName = try container.verifyReceiptString(forKey: .offerCodeRefName)
        promotionalOfferId = try container.verifyReceiptString(forKey: .promotionalOfferId)
    }
}
