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

    struct RareFields: Sendable, Equatable {
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
    package init(_ entry: LedgerEntry, pool: inout StringPool, users: inout StringPool) {
        let payload = entry.transaction
        transactionId = PackedID(entry.transactionId, pool: &pool)
        originalTransactionId = PackedID(entry.originalTransactionId, pool: &pool)
        payloadTransactionId = PackedID(payload.transactionId, pool: &pool)
        payloadOriginalTransactionId = PackedID(payload.originalTransactionId, pool: &pool)
        webOrderLineItemId = PackedID(payload.webOrderLineItemId, pool: &pool)
        purchaseDate = Self.pack(payload.purchaseDate)
        originalPurchaseDate = Self.pack(payload.originalPurchaseDate)
        expiresDate = Self.pack(payload.expiresDate)
        signedDate = Self.pack(payload.signedDate)
        recordedAt = Self.pack(entry.recordedAt)
        deliveredAt = Self.pack(entry.deliveredAt)
        nextAttemptAt = Self.pack(entry.nextAttemptAt)
        revision = entry.revision
        var flags: Flags = []
        price = payload.price ?? 0
        if payload.price != nil {
            flags.insert(.hasPrice)
        }
        grantedUnits = entry.grantedUnits ?? 0
        if entry.grantedUnits != nil {
            flags.insert(.hasGrantedUnits)
        }
        quantity = payload.quantity ?? 0
        if payload.quantity != nil {
            flags.insert(.hasQuantity)
        }
        if entry.revocationDelivered {
            flags.insert(.revocationDelivered)
        }
        if entry.grantAttempted {
            flags.insert(.grantAttempted)
        }
        self.flags = flags
        userId = users.intern(entry.userId)
        productId = pool.intern(entry.productId)
        payloadProductId = pool.intern(payload.productId)
        bundleId = pool.intern(payload.bundleId)
        subscriptionGroupIdentifier = pool.intern(payload.subscriptionGroupIdentifier)
        appAccountToken = pool.intern(payload.appAccountToken)
        storefront = pool.intern(payload.storefront)
        storefrontId = pool.intern(payload.storefrontId)
        currency = pool.intern(payload.currency)
        appTransactionId = pool.intern(payload.appTransactionId)
        type = pool.intern(payload.type?.rawValue)
        inAppOwnershipType = pool.intern(payload.inAppOwnershipType?.rawValue)
        environment = pool.intern(payload.environment?.rawValue)
        transactionReason = pool.intern(payload.transactionReason?.rawValue)
        deliveryState = entry.deliveryState
        orderId = entry.orderId
        var rare = RareFields(
            offerType: payload.offerType,
            offerIdentifier: payload.offerIdentifier,
            offerDiscountType: payload.offerDiscountType,
            offerPeriod: payload.offerPeriod,
            isUpgraded: payload.isUpgraded,
            revocationReason: payload.revocationReason,
            revocationDate: payload.revocationDate,
            revocationType: payload.revocationType,
            revocationPercentage: payload.revocationPercentage,
            advancedCommerceInfo: payload.advancedCommerceInfo,
            billingPlanType: payload.billingPlanType,
            commitmentInfo: payload.commitmentInfo,
            lastError: entry.lastError,
            revokedAt: entry.revokedAt,
            refundAccessKept: entry.refundAccessKept,
            givenUpAt: entry.givenUpAt,
            consentRescindedAt: entry.consentRescindedAt
        )
        if let attempts = Int32(exactly: entry.deliveryAttempts) {
            deliveryAttempts = attempts
        } else {
            deliveryAttempts = 0
            rare.deliveryAttempts = entry.deliveryAttempts
        }
        if let generation = Int32(exactly: entry.grantGeneration) {
            grantGeneration = generation
        } else {
            grantGeneration = 0
            rare.grantGeneration = entry.grantGeneration
        }
        self.rare = rare == .empty ? nil : Rare(rare)
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
