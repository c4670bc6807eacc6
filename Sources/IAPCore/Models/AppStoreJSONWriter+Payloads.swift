// Each payload's members, in the order `JSONEncoder` sorts their keys: by UTF-8 bytes, upper case before lower.

extension AppStoreJSONWriter {
    /// Appends a transaction payload.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date beyond 64-bit milliseconds.
    public mutating func append(_ payload: TransactionPayload) throws {
        try members { out in
            try out.object("advancedCommerceInfo", payload.advancedCommerceInfo, Self.write)
            out.field("appAccountToken", payload.appAccountToken)
            out.field("appTransactionId", payload.appTransactionId)
            out.field("billingPlanType", payload.billingPlanType)
            out.field("bundleId", payload.bundleId)
            try out.object("commitmentInfo", payload.commitmentInfo, Self.write)
            out.field("currency", payload.currency)
            out.field("environment", payload.environment)
            try out.field("expiresDate", payload.expiresDate)
            out.field("inAppOwnershipType", payload.inAppOwnershipType)
            out.field("isUpgraded", payload.isUpgraded)
            out.field("offerDiscountType", payload.offerDiscountType)
            out.field("offerIdentifier", payload.offerIdentifier)
            out.field("offerPeriod", payload.offerPeriod)
            out.field("offerType", payload.offerType)
            try out.field("originalPurchaseDate", payload.originalPurchaseDate)
            out.field("originalTransactionId", payload.originalTransactionId)
            out.field("price", payload.price)
            out.field("productId", payload.productId)
            try out.field("purchaseDate", payload.purchaseDate)
            out.field("quantity", payload.quantity)
            try out.field("revocationDate", payload.revocationDate)
            out.field("revocationPercentage", payload.revocationPercentage)
            out.field("revocationReason", payload.revocationReason)
            out.field("revocationType", payload.revocationType)
            try out.field("signedDate", payload.signedDate)
            out.field("storefront", payload.storefront)
            out.field("storefrontId", payload.storefrontId)
            out.field("subscriptionGroupIdentifier", payload.subscriptionGroupIdentifier)
            out.field("transactionId", payload.transactionId)
            out.field("transactionReason", payload.transactionReason)
            out.field("type", payload.type)
            out.field("webOrderLineItemId", payload.webOrderLineItemId)
        }
    }

    /// Appends a renewal info payload.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date beyond 64-bit milliseconds.
    public mutating func append(_ payload: RenewalInfoPayload) throws {
        try members { out in
            out.object("advancedCommerceInfo", payload.advancedCommerceInfo, Self.write)
            out.field("appAccountToken", payload.appAccountToken)
            out.field("appTransactionId", payload.appTransactionId)
            out.field("autoRenewProductId", payload.autoRenewProductId)
            out.field("autoRenewStatus", payload.autoRenewStatus)
            try out.object("commitmentInfo", payload.commitmentInfo, Self.write)
            out.field("currency", payload.currency)
            out.field("eligibleWinBackOfferIds", payload.eligibleWinBackOfferIds)
            out.field("environment", payload.environment)
            out.field("expirationIntent", payload.expirationIntent)
            try out.field("gracePeriodExpiresDate", payload.gracePeriodExpiresDate)
            out.field("isInBillingRetryPeriod", payload.isInBillingRetryPeriod)
            out.field("offerDiscountType", payload.offerDiscountType)
            out.field("offerIdentifier", payload.offerIdentifier)
            out.field("offerPeriod", payload.offerPeriod)
            out.field("offerType", payload.offerType)
            out.field("originalTransactionId", payload.originalTransactionId)
            out.field("priceIncreaseStatus", payload.priceIncreaseStatus)
            out.field("productId", payload.productId)
            try out.field("recentSubscriptionStartDate", payload.recentSubscriptionStartDate)
            out.field("renewalBillingPlanType", payload.renewalBillingPlanType)
            try out.field("renewalDate", payload.renewalDate)
            out.field("renewalPrice", payload.renewalPrice)
            try out.field("signedDate", payload.signedDate)
        }
    }

    /// Appends a notification payload (the nested signed data stays as the JWS strings it carries).
    ///
    /// - Throws: `EncodingError.invalidValue` for a date beyond 64-bit milliseconds.
    public mutating func append(_ payload: NotificationPayload) throws {
        try members { out in
            out.object("appData", payload.appData) { out, appData in
                out.field("appAppleId", appData.appAppleId)
                out.field("bundleId", appData.bundleId)
                out.field("environment", appData.environment)
                out.field("signedAppTransactionInfo", appData.signedAppTransactionInfo)
            }
            out.object("data", payload.data) { out, data in
                out.field("appAppleId", data.appAppleId)
                out.field("bundleId", data.bundleId)
                out.field("bundleVersion", data.bundleVersion)
                out.field("consumptionRequestReason", data.consumptionRequestReason)
                out.field("environment", data.environment)
                out.field("signedRenewalInfo", data.signedRenewalInfo)
                out.field("signedTransactionInfo", data.signedTransactionInfo)
                out.field("status", data.status)
            }
            out.object("externalPurchaseToken", payload.externalPurchaseToken) { out, token in
                out.field("appAppleId", token.appAppleId)
                out.field("bundleId", token.bundleId)
                out.field("externalPurchaseId", token.externalPurchaseId)
                out.field("tokenCreationDate", token.tokenCreationDate)
            }
            out.field("notificationType", payload.notificationType)
            out.field("notificationUUID", payload.notificationUUID)
            try out.field("signedDate", payload.signedDate)
            out.field("subtype", payload.subtype)
            out.object("summary", payload.summary) { out, summary in
                out.field("appAppleId", summary.appAppleId)
                out.field("bundleId", summary.bundleId)
                out.field("environment", summary.environment)
                out.field("failedCount", summary.failedCount)
                out.field("productId", summary.productId)
                out.field("requestIdentifier", summary.requestIdentifier)
                out.field("storefrontCountryCodes", summary.storefrontCountryCodes)
                out.field("succeededCount", summary.succeededCount)
            }
            out.field("version", payload.version)
        }
    }

    /// Appends an app transaction payload.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date beyond 64-bit milliseconds.
    public mutating func append(_ payload: AppTransactionPayload) throws {
        try members { out in
            out.field("appAppleId", payload.appAppleId)
            out.field("appTransactionId", payload.appTransactionId)
            out.field("applicationVersion", payload.applicationVersion)
            out.field("bundleId", payload.bundleId)
            out.field("deviceVerification", payload.deviceVerification)
            out.field("deviceVerificationNonce", payload.deviceVerificationNonce)
            out.field("originalApplicationVersion", payload.originalApplicationVersion)
            out.field("originalPlatform", payload.originalPlatform)
            try out.field("originalPurchaseDate", payload.originalPurchaseDate)
            try out.field("preorderDate", payload.preorderDate)
            try out.field("receiptCreationDate", payload.receiptCreationDate)
            out.field("receiptType", payload.receiptType)
            out.field("versionExternalIdentifier", payload.versionExternalIdentifier)
        }
    }

    /// Appends the payload of verified signed data of any kind; for a notification, its own payload.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date beyond 64-bit milliseconds.
    public mutating func append(_ verified: VerifiedSignedData) throws {
        switch verified {
        case .transaction(let payload): try append(payload)
        case .renewal(let payload): try append(payload)
        case .notification(let notification): try append(notification.payload)
        case .appTransaction(let payload): try append(payload)
        }
    }

    // MARK: - Nested objects

    private static func write(_ out: inout AppStoreJSONWriter, _ info: TransactionCommitmentInfo) throws {
        out.field("billingPeriodNumber", info.billingPeriodNumber)
        try out.field("commitmentExpiresDate", info.commitmentExpiresDate)
        out.field("commitmentPrice", info.commitmentPrice)
        out.field("totalBillingPeriods", info.totalBillingPeriods)
    }

    private static func write(_ out: inout AppStoreJSONWriter, _ info: RenewalCommitmentInfo) throws {
        out.field("commitmentAutoRenewProductId", info.commitmentAutoRenewProductId)
        out.field("commitmentAutoRenewStatus", info.commitmentAutoRenewStatus)
        out.field("commitmentRenewalBillingPlanType", info.commitmentRenewalBillingPlanType)
        try out.field("commitmentRenewalDate", info.commitmentRenewalDate)
        out.field("commitmentRenewalPrice", info.commitmentRenewalPrice)
    }

    private static func write(_ out: inout AppStoreJSONWriter, _ info: AdvancedCommerceTransactionInfo) throws {
        out.object("descriptors", info.descriptors, write)
        out.field("estimatedTax", info.estimatedTax)
        try out.array("items", info.items, write)
        out.field("period", info.period)
        out.field("requestReferenceId", info.requestReferenceId)
        out.field("taxCode", info.taxCode)
        out.field("taxExclusivePrice", info.taxExclusivePrice)
        out.field("taxRate", info.taxRate)
    }

    private static func write(_ out: inout AppStoreJSONWriter, _ item: AdvancedCommerceTransactionItem) throws {
        out.field("SKU", item.sku)
        out.field("description", item.description)
        out.field("displayName", item.displayName)
        out.object("offer", item.offer, write)
        out.field("price", item.price)
        try out.array("refunds", item.refunds) { out, refund in
            out.field("refundAmount", refund.refundAmount)
            try out.field("refundDate", refund.refundDate)
            out.field("refundReason", refund.refundReason)
            out.field("refundType", refund.refundType)
        }
        try out.field("revocationDate", item.revocationDate)
    }

    private static func write(_ out: inout AppStoreJSONWriter, _ info: AdvancedCommerceRenewalInfo) {
        out.field("consistencyToken", info.consistencyToken)
        out.object("descriptors", info.descriptors, write)
        out.array("items", info.items) { out, item in
            out.field("SKU", item.sku)
            out.field("description", item.description)
            out.field("displayName", item.displayName)
            out.object("offer", item.offer, write)
            out.field("price", item.price)
            out.object("priceIncreaseInfo", item.priceIncreaseInfo) { out, increase in
                out.field("dependentSKUs", increase.dependentSKUs)
                out.field("price", increase.price)
                out.field("status", increase.status)
            }
        }
        out.field("period", info.period)
        out.field("requestReferenceId", info.requestReferenceId)
        out.field("taxCode", info.taxCode)
    }

    private static func write(_ out: inout AppStoreJSONWriter, _ descriptors: AdvancedCommerceDescriptors) {
        out.field("description", descriptors.description)
        out.field("displayName", descriptors.displayName)
    }

    private static func write(_ out: inout AppStoreJSONWriter, _ offer: AdvancedCommerceOffer) {
        out.field("period", offer.period)
        out.field("periodCount", offer.periodCount)
        out.field("price", offer.price)
        out.field("reason", offer.reason)
    }
}
