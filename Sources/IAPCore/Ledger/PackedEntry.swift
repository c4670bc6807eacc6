#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``LedgerEntry`` as ``LedgerState`` holds it: about 220 bytes instead of about 900.
///
/// Strings that repeat across entries (product, bundle id, storefront, currency, the open enumerations' wire values,
/// user ids, tokens) are numbers of the state's ``StringPool``s; transaction ids are ``PackedID``s; dates are their
/// 8-byte time intervals; the sequence is the position. Fields that most entries leave empty (offers, revocation,
/// errors, consent, Advanced Commerce, commitments) live in one out-of-line box, allocated only for the entries that
/// use them. Packing is lossless: ``unpacked(sequence:pool:users:)`` gives back an entry equal, byte for byte, to the
/// one packed.
package struct PackedEntry: Sendable {
    // Eight-byte fields.
    var transactionId: PackedID
    var originalTransactionId: PackedID
    var payloadTransactionId: PackedID
    var payloadOriginalTransactionId: PackedID
    var webOrderLineItemId: PackedID
    var purchaseDate: UInt64
    var originalPurchaseDate: UInt64
    var expiresDate: UInt64
    var signedDate: UInt64
    var recordedAt: UInt64
    var deliveredAt: UInt64
    var nextAttemptAt: UInt64
    var price: Int64
    var grantedUnits: Int64
    var revision: Int64
    // Numbers of the pools.
    var userId: UInt32
    var productId: UInt32
    var payloadProductId: UInt32
    var bundleId: UInt32
    var subscriptionGroupIdentifier: UInt32
    var appAccountToken: UInt32
    var storefront: UInt32
    var storefrontId: UInt32
    var currency: UInt32
    var appTransactionId: UInt32
    var type: UInt32
    var inAppOwnershipType: UInt32
    var environment: UInt32
    var transactionReason: UInt32
    var quantity: Int32
    var deliveryAttempts: Int32
    var grantGeneration: Int32
    var flags: Flags
    var deliveryState: DeliveryState
    var orderId: String?
    var rare: Rare?

    /// Which optional numbers are present, and the two booleans.
    struct Flags: OptionSet, Sendable {
        let rawValue: UInt8
        static let hasPrice = Flags(rawValue: 1 << 0)
        static let hasGrantedUnits = Flags(rawValue: 1 << 1)
        static let hasQuantity = Flags(rawValue: 1 << 2)
        static let revocationDelivered = Flags(rawValue: 1 << 3)
        static let grantAttempted = Flags(rawValue: 1 << 4)
    }

    /// The fields few entries use, out of line.
    final class Rare: Sendable {
        let fields: RareFields

        init(_ fields: RareFields) {
            self.fields = fields
        }
    }

    struct RareFields: Sendable {
        var offerType: OfferType?
        var offerIdentifier: String?
        var offerDiscountType: OfferDiscountType?
        var offerPeriod: String?
        var isUpgraded: Bool?
        var revocationReason: RevocationReason?
        var revocationDate: Date?
        var revocationType: RevocationType?
        var revocationPercentage: Int32?
        var advancedCommerceInfo: AdvancedCommerceTransactionInfo?
        var billingPlanType: BillingPlanType?
        var commitmentInfo: TransactionCommitmentInfo?
        var lastError: String?
        var revokedAt: Date?
        var refundAccessKept: Bool?
        var givenUpAt: Date?
        var consentRescindedAt: Date?
        /// The counts that do not fit in 32 bits (never in practice; kept so that packing stays lossless).
        var deliveryAttempts: Int?
        var grantGeneration: Int?

        static let empty = RareFields()
    }

    /// The packed form of `entry`, adding its strings to the pools.
    package init(_ entry: borrowing LedgerEntry, pool: inout StringPool, users: inout StringPool) {
        transactionId = PackedID(entry.transactionId, pool: &pool)
        originalTransactionId = PackedID(entry.originalTransactionId, pool: &pool)
        payloadTransactionId = PackedID(entry.transaction.transactionId, pool: &pool)
        payloadOriginalTransactionId = PackedID(entry.transaction.originalTransactionId, pool: &pool)
        webOrderLineItemId = PackedID(entry.transaction.webOrderLineItemId, pool: &pool)
        purchaseDate = Self.pack(entry.transaction.purchaseDate)
        originalPurchaseDate = Self.pack(entry.transaction.originalPurchaseDate)
        expiresDate = Self.pack(entry.transaction.expiresDate)
        signedDate = Self.pack(entry.transaction.signedDate)
        recordedAt = Self.pack(entry.recordedAt)
        deliveredAt = Self.pack(entry.deliveredAt)
        nextAttemptAt = Self.pack(entry.nextAttemptAt)
        revision = entry.revision
        var flags: Flags = []
        price = entry.transaction.price ?? 0
        if entry.transaction.price != nil {
            flags.insert(.hasPrice)
        }
        grantedUnits = entry.grantedUnits ?? 0
        if entry.grantedUnits != nil {
            flags.insert(.hasGrantedUnits)
        }
        quantity = entry.transaction.quantity ?? 0
        if entry.transaction.quantity != nil {
            flags.insert(.hasQuantity)
        }
        if entry.revocationDelivered {
            flags.insert(.revocationDelivered)
        }
        if entry.grantAttempted {
            flags.insert(.grantAttempted)
        }
        self.flags = flags
        userId = users.intern(entry.userId, slot: 1)
        productId = pool.intern(entry.productId, slot: 2)
        payloadProductId = pool.intern(entry.transaction.productId, slot: 3)
        bundleId = pool.intern(entry.transaction.bundleId, slot: 4)
        subscriptionGroupIdentifier = pool.intern(entry.transaction.subscriptionGroupIdentifier, slot: 5)
        appAccountToken = pool.intern(entry.transaction.appAccountToken, slot: 6)
        storefront = pool.intern(entry.transaction.storefront, slot: 7)
        storefrontId = pool.intern(entry.transaction.storefrontId, slot: 8)
        currency = pool.intern(entry.transaction.currency, slot: 9)
        appTransactionId = pool.intern(entry.transaction.appTransactionId, slot: 10)
        type = pool.intern(entry.transaction.type?.rawValue, slot: 11)
        inAppOwnershipType = pool.intern(entry.transaction.inAppOwnershipType?.rawValue, slot: 12)
        environment = pool.intern(entry.transaction.environment?.rawValue, slot: 13)
        transactionReason = pool.intern(entry.transaction.transactionReason?.rawValue, slot: 14)
        deliveryState = entry.deliveryState
        orderId = entry.orderId
        var boxed = Self.hasRareFields(entry)
        var rare = boxed ? Self.rareFields(of: entry) : RareFields.empty
        if let attempts = Int32(exactly: entry.deliveryAttempts) {
            deliveryAttempts = attempts
        } else {
            deliveryAttempts = 0
            rare.deliveryAttempts = entry.deliveryAttempts
            boxed = true
        }
        if let generation = Int32(exactly: entry.grantGeneration) {
            grantGeneration = generation
        } else {
            grantGeneration = 0
            rare.grantGeneration = entry.grantGeneration
            boxed = true
        }
        self.rare = boxed ? Rare(rare) : nil
    }

    /// Whether any field kept out of line is set: most entries have none, and building the box to find out would cost
    /// more than packing the rest.
    private static func hasRareFields(_ entry: borrowing LedgerEntry) -> Bool {
        entry.transaction.offerType != nil || entry.transaction.offerIdentifier != nil
            || entry.transaction.offerDiscountType != nil || entry.transaction.offerPeriod != nil
            || entry.transaction.isUpgraded != nil || entry.transaction.revocationReason != nil
            || entry.transaction.revocationDate != nil || entry.transaction.revocationType != nil
            || entry.transaction.revocationPercentage != nil || entry.transaction.advancedCommerceInfo != nil
            || entry.transaction.billingPlanType != nil || entry.transaction.commitmentInfo != nil
            || entry.lastError != nil || entry.revokedAt != nil || entry.refundAccessKept != nil
            || entry.givenUpAt != nil || entry.consentRescindedAt != nil
    }

    private static func rareFields(of entry: borrowing LedgerEntry) -> RareFields {
        RareFields(
            offerType: entry.transaction.offerType,
            offerIdentifier: entry.transaction.offerIdentifier,
            offerDiscountType: entry.transaction.offerDiscountType,
            offerPeriod: entry.transaction.offerPeriod,
            isUpgraded: entry.transaction.isUpgraded,
            revocationReason: entry.transaction.revocationReason,
            revocationDate: entry.transaction.revocationDate,
            revocationType: entry.transaction.revocationType,
            revocationPercentage: entry.transaction.revocationPercentage,
            advancedCommerceInfo: entry.transaction.advancedCommerceInfo,
            billingPlanType: entry.transaction.billingPlanType,
            commitmentInfo: entry.transaction.commitmentInfo,
            lastError: entry.lastError,
            revokedAt: entry.revokedAt,
            refundAccessKept: entry.refundAccessKept,
            givenUpAt: entry.givenUpAt,
            consentRescindedAt: entry.consentRescindedAt
        )
    }

    /// The entry, as it was packed, at `sequence`.
    package func unpacked(sequence: Int64, pool: StringPool, users: StringPool) -> LedgerEntry {
        let rare = rare?.fields ?? .empty
        let payload = TransactionPayload(
            originalTransactionId: payloadOriginalTransactionId.unpacked(pool),
            transactionId: payloadTransactionId.unpacked(pool),
            webOrderLineItemId: webOrderLineItemId.unpacked(pool),
            bundleId: pool[bundleId],
            productId: pool[payloadProductId],
            subscriptionGroupIdentifier: pool[subscriptionGroupIdentifier],
            purchaseDate: Self.unpack(purchaseDate),
            originalPurchaseDate: Self.unpack(originalPurchaseDate),
            expiresDate: Self.unpack(expiresDate),
            quantity: flags.contains(.hasQuantity) ? quantity : nil,
            type: pool[type].map(ProductType.init(rawValue:)),
            appAccountToken: pool[appAccountToken],
            inAppOwnershipType: pool[inAppOwnershipType].map(InAppOwnershipType.init(rawValue:)),
            signedDate: Self.unpack(signedDate),
            revocationReason: rare.revocationReason,
            revocationDate: rare.revocationDate,
            isUpgraded: rare.isUpgraded,
            offerType: rare.offerType,
            offerIdentifier: rare.offerIdentifier,
            environment: pool[environment].map(AppStoreEnvironment.init(rawValue:)),
            storefront: pool[storefront],
            storefrontId: pool[storefrontId],
            transactionReason: pool[transactionReason].map(TransactionReason.init(rawValue:)),
            currency: pool[currency],
            price: flags.contains(.hasPrice) ? price : nil,
            offerDiscountType: rare.offerDiscountType,
            appTransactionId: pool[appTransactionId],
            offerPeriod: rare.offerPeriod,
            revocationType: rare.revocationType,
            revocationPercentage: rare.revocationPercentage,
            advancedCommerceInfo: rare.advancedCommerceInfo,
            billingPlanType: rare.billingPlanType,
            commitmentInfo: rare.commitmentInfo
        )
        var entry = LedgerEntry(
            transaction: payload,
            transactionId: transactionId.unpacked(pool) ?? "",
            originalTransactionId: originalTransactionId.unpacked(pool) ?? "",
            userId: users[userId] ?? "",
            productId: pool[productId] ?? "",
            orderId: orderId,
            recordedAt: Self.unpack(recordedAt) ?? Date(timeIntervalSinceReferenceDate: 0)
        )
        entry.deliveryState = deliveryState
        entry.deliveryAttempts = rare.deliveryAttempts ?? Int(deliveryAttempts)
        entry.nextAttemptAt = Self.unpack(nextAttemptAt)
        entry.lastError = rare.lastError
        entry.deliveredAt = Self.unpack(deliveredAt)
        entry.revokedAt = rare.revokedAt
        entry.revocationDelivered = flags.contains(.revocationDelivered)
        entry.grantGeneration = rare.grantGeneration ?? Int(grantGeneration)
        entry.grantAttempted = flags.contains(.grantAttempted)
        entry.grantedUnits = flags.contains(.hasGrantedUnits) ? grantedUnits : nil
        entry.refundAccessKept = rare.refundAccessKept
        entry.givenUpAt = rare.givenUpAt
        entry.consentRescindedAt = rare.consentRescindedAt
        entry.sequence = sequence
        entry.revision = revision
        return entry
    }

    /// The time interval's bits; `nil` is a NaN no date holds.
    private static let noDate = UInt64.max

    private static func pack(_ date: Date?) -> UInt64 {
        date.map { $0.timeIntervalSinceReferenceDate.bitPattern } ?? noDate
    }

    private static func unpack(_ bits: UInt64) -> Date? {
        bits == noDate ? nil : Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }
}
