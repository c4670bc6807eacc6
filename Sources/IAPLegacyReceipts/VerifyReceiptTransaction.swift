import IAPCore
/// One in-app purchase in a `verifyReceipt` answer: an entry of `receipt.in_app` or `latest_receipt_info`.
///
/// Apple's field names are kept in the JSON form; identifiers and dates (milliseconds since 1970) are strings, as
/// Apple sends them. Only what a migration to the App Store Server API needs is decoded.
public struct VerifyReceiptTransaction: Codable, Hashable, Sendable {
    /// `transaction_id`.
    public var transactionId: String?
    /// `original_transaction_id`: the identifier to look the customer up with in the App Store Server API.
    public var originalTransactionId: String?
    /// `product_id`.
    public var productId: String?
    /// `quantity`.
    public var quantity: String?
    /// `purchase_date_ms`.
    public var purchaseDateMs: String?
    /// `original_purchase_date_ms`.
    public var originalPurchaseDateMs: String?
    /// `expires_date_ms`, for subscriptions.
    public var expiresDateMs: String?
    /// `cancellation_date_ms`: set when Apple refunded or revoked the purchase.
    public var cancellationDateMs: String?
    /// `cancellation_reason`: `"1"` for an issue in the app, `"0"` for another reason.
    public var cancellationReason: String?
    /// `web_order_line_item_id`.
    public var webOrderLineItemId: String?
    /// `is_trial_period`.
    public var isTrialPeriod: String?
    /// `is_in_intro_offer_period`.
    public var isInIntroOfferPeriod: String?
    /// `subscription_group_identifier`.
    public var subscriptionGroupIdentifier: String?
    /// `in_app_ownership_type`: `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    /// `app_account_token`.
    public var appAccountToken: String?

    enum CodingKeys: String, CodingKey {
        case transactionId = "transaction_id"
        case originalTransactionId = "original_transaction_id"
        case productId = "product_id"
        case quantity
        case purchaseDateMs = "purchase_date_ms"
        case originalPurchaseDateMs = "original_purchase_date_ms"
        case expiresDateMs = "expires_date_ms"
        case cancellationDateMs = "cancellation_date_ms"
        case cancellationReason = "cancellation_reason"
        case webOrderLineItemId = "web_order_line_item_id"
        case isTrialPeriod = "is_trial_period"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case subscriptionGroupIdentifier = "subscription_group_identifier"
        case inAppOwnershipType = "in_app_ownership_type"
        case appAccountToken = "app_account_token"
    }

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        transactionId: String? = nil,
        originalTransactionId: String? = nil,
        productId: String? = nil,
        quantity: String? = nil,
        purchaseDateMs: String? = nil,
        originalPurchaseDateMs: String? = nil,
        expiresDateMs: String? = nil,
        cancellationDateMs: String? = nil,
        cancellationReason: String? = nil,
        webOrderLineItemId: String? = nil,
        isTrialPeriod: String? = nil,
        isInIntroOfferPeriod: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        inAppOwnershipType: String? = nil,
        appAccountToken: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.quantity = quantity
        self.purchaseDateMs = purchaseDateMs
        self.originalPurchaseDateMs = originalPurchaseDateMs
        self.expiresDateMs = expiresDateMs
        self.cancellationDateMs = cancellationDateMs
        self.cancellationReason = cancellationReason
        self.webOrderLineItemId = webOrderLineItemId
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.inAppOwnershipType = inAppOwnershipType
        self.appAccountToken = appAccountToken
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = try container.verifyReceiptString(forKey: .transactionId)
        originalTransactionId = try container.verifyReceiptString(forKey: .originalTransactionId)
        productId = try container.verifyReceiptString(forKey: .productId)
        quantity = try container.verifyReceiptString(forKey: .quantity)
        purchaseDateMs = try container.verifyReceiptString(forKey: .purchaseDateMs)
        originalPurchaseDateMs = try container.verifyReceiptString(forKey: .originalPurchaseDateMs)
        expiresDateMs = try container.verifyReceiptString(forKey: .expiresDateMs)
        cancellationDateMs = try container.verifyReceiptString(forKey: .cancellationDateMs)
        cancellationReason = try container.verifyReceiptString(forKey: .cancellationReason)
        webOrderLineItemId = try container.verifyReceiptString(forKey: .webOrderLineItemId)
        isTrialPeriod = try container.verifyReceiptString(forKey: .isTrialPeriod)
        isInIntroOfferPeriod = try container.verifyReceiptString(forKey: .isInIntroOfferPeriod)
        subscriptionGroupIdentifier = try container.verifyReceiptString(forKey: .subscriptionGroupIdentifier)
        inAppOwnershipType = try container.verifyReceiptString(forKey: .inAppOwnershipType)
        appAccountToken = try container.verifyReceiptString(forKey: .appAccountToken)
    }
}
