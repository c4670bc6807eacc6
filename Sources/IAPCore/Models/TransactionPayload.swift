#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The decoded payload of a signed transaction.
///
/// Mirrors Apple's `JWSTransactionDecodedPayload`: what the App Store says about one purchase, renewal or refund.
/// Every field is optional because Apple omits fields that do not apply (and may omit others); dates are read with
/// ``AppStoreJSON``, prices are in milliunits of `currency` (10990 = 10.99) and unknown JSON keys are ignored.
public struct TransactionPayload: SignedPayload, Hashable {
    /// The transaction identifier of the original purchase; stable across renewals and restores.
    public var originalTransactionId: String?
    /// The unique identifier of this transaction.
    public var transactionId: String?
    /// The identifier of a subscription purchase event across devices, including renewals.
    public var webOrderLineItemId: String?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The product identifier of the in-app purchase.
    public var productId: String?
    /// The identifier of the subscription group the subscription belongs to.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer's account (for a renewal, when the renewal happened).
    public var purchaseDate: Date?
    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When a subscription expires or renews.
    public var expiresDate: Date?
    /// The number of consumable products purchased; see ``effectiveQuantity``.
    public var quantity: Int32?
    /// The kind of in-app purchase.
    public var type: ProductType?
    /// The UUID the app attached to the purchase to identify the user, as sent; see ``appAccountTokenUUID``.
    public var appAccountToken: String?
    /// Whether the customer bought the product or has it through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed the data.
    public var signedDate: Date?
    /// Why the App Store refunded or revoked the transaction.
    public var revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction; `nil` unless revoked.
    public var revocationDate: Date?
    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// The kind of offer that applies to the transaction.
    public var offerType: OfferType?
    /// The identifier of the promotional offer or offer code, or the reference name of a win-back offer.
    public var offerIdentifier: String?
    /// The environment that produced the transaction.
    public var environment: AppStoreEnvironment?
    /// The three-letter code (ISO 3166-1 alpha-3) of the App Store storefront.
    public var storefront: String?
    /// Apple's identifier of the storefront.
    public var storefrontId: String?
    /// Whether the transaction is a purchase or a renewal.
    public var transactionReason: TransactionReason?
    /// The three-letter ISO 4217 currency code of `price`.
    public var currency: String?
    /// The price in milliunits of `currency` (10990 is 10.99).
    public var price: Int64?
    /// The payment mode of the offer that applies to the transaction.
    public var offerDiscountType: OfferDiscountType?
    /// The identifier of the app download transaction of the customer.
    public var appTransactionId: String?
    /// The duration of the offer as an ISO 8601 duration, such as `P1Y`.
    public var offerPeriod: String?
    /// How the transaction was revoked.
    public var revocationType: RevocationType?
    /// The refunded share of a prorated refund, in milliunits of a percent (50000 is 50%).
    public var revocationPercentage: Int32?
    /// The details of an Advanced Commerce transaction.
    public var advancedCommerceInfo: AdvancedCommerceTransactionInfo? {
        get { advancedCommerceBox?.value }
        set { advancedCommerceBox = newValue.map(PayloadBox.init) }
    }
    /// How the customer pays for a subscription with a commitment.
    public var billingPlanType: BillingPlanType?
    /// The commitment of a subscription billed monthly over a longer term.
    public var commitmentInfo: TransactionCommitmentInfo? {
        get { commitmentBox?.value }
        set { commitmentBox = newValue.map(PayloadBox.init) }
    }

    // The two rarely present nested objects live out of line: a ledger holds a payload per transaction, and
    // inline they would take a quarter of its size.
    private var advancedCommerceBox: PayloadBox<AdvancedCommerceTransactionInfo>? = nil
    private var commitmentBox: PayloadBox<TransactionCommitmentInfo>? = nil

    private enum CodingKeys: String, CodingKey {
        case originalTransactionId, transactionId, webOrderLineItemId, bundleId, productId
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, quantity, type
        case appAccountToken, inAppOwnershipType, signedDate, revocationReason, revocationDate, isUpgraded
        case offerType, offerIdentifier, environment, storefront, storefrontId, transactionReason, currency
        case price, offerDiscountType, appTransactionId, offerPeriod, revocationType, revocationPercentage
        case billingPlanType
        case advancedCommerceBox = "advancedCommerceInfo"
        case commitmentBox = "commitmentInfo"
    }

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        originalTransactionId: String? = nil,
        transactionId: String? = nil,
        webOrderLineItemId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        quantity: Int32? = nil,
        type: ProductType? = nil,
        appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil,
        signedDate: Date? = nil,
        revocationReason: RevocationReason? = nil,
        revocationDate: Date? = nil,
        isUpgraded: Bool? = nil,
        offerType: OfferType? = nil,
        offerIdentifier: String? = nil,
        environment: AppStoreEnvironment? = nil,
        storefront: String? = nil,
        storefrontId: String? = nil,
        transactionReason: TransactionReason? = nil,
        currency: String? = nil,
        price: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil,
        appTransactionId: String? = nil,
        offerPeriod: String? = nil,
        revocationType: RevocationType? = nil,
        revocationPercentage: Int32? = nil,
        advancedCommerceInfo: AdvancedCommerceTransactionInfo? = nil,
        billingPlanType: BillingPlanType? = nil,
        commitmentInfo: TransactionCommitmentInfo? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionId = appTransactionId
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.advancedCommerceInfo = advancedCommerceInfo
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
    }
}

extension TransactionPayload {
    /// The date the App Store signed the transaction, ``signedDate``.
    public var signingDate: Date? { signedDate }

    /// Whether the App Store refunded or revoked the transaction, that is whether ``revocationDate`` is set.
    public var isRevoked: Bool { revocationDate != nil }

    /// The number of items to deliver: ``quantity``, or 1 when it is missing, zero or negative.
    public var effectiveQuantity: Int { max(Int(quantity ?? 1), 1) }

    /// ``appAccountToken`` as a UUID, or `nil` when it is missing or not a UUID.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }
}
