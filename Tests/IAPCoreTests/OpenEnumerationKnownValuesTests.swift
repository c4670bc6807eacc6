import IAPCore
import Testing

/// The raw values of every open enumeration, checked name by name against Apple's documentation.
@Suite struct OpenEnumerationKnownValuesTests {
    @Test func appStoreEnvironmentKnownValues() {
        #expect(AppStoreEnvironment.allKnown == [.sandbox, .production, .xcode, .localTesting])
        #expect(AppStoreEnvironment.allKnown.map(\.rawValue) == ["Sandbox", "Production", "Xcode", "LocalTesting"])
    }

    @Test func autoRenewStatusKnownValues() {
        #expect(AutoRenewStatus.allKnown == [.off, .on])
        #expect(AutoRenewStatus.allKnown.map(\.rawValue) == [0, 1])
    }

    @Test func billingPlanTypeKnownValues() {
        #expect(BillingPlanType.allKnown == [.billedUpfront, .monthly])
        #expect(BillingPlanType.allKnown.map(\.rawValue) == ["BILLED_UPFRONT", "MONTHLY"])
    }

    @Test func consumptionRequestReasonKnownValues() {
        #expect(
            ConsumptionRequestReason.allKnown == [
                .unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other,
            ]
        )
        #expect(
            ConsumptionRequestReason.allKnown.map(\.rawValue) == [
                "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
            ]
        )
    }

    @Test func expirationIntentKnownValues() {
        #expect(
            ExpirationIntent.allKnown == [
                .customerCancelled, .billingError, .customerDidNotConsentToPriceIncrease, .productNotAvailable, .other,
            ]
        )
        #expect(ExpirationIntent.allKnown.map(\.rawValue) == [1, 2, 3, 4, 5])
    }

    @Test func inAppOwnershipTypeKnownValues() {
        #expect(InAppOwnershipType.allKnown == [.familyShared, .purchased])
        #expect(InAppOwnershipType.allKnown.map(\.rawValue) == ["FAMILY_SHARED", "PURCHASED"])
    }

    @Test func notificationTypeKnownValues() {
        #expect(
            NotificationType.allKnown == [
                .subscribed, .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .didRenew, .expired,
                .didFailToRenew, .gracePeriodExpired, .priceIncrease, .refund, .refundDeclined, .consumptionRequest,
                .renewalExtended, .revoke, .test, .renewalExtension, .refundReversed, .externalPurchaseToken,
                .oneTimeCharge, .rescindConsent, .metadataUpdate, .migration, .priceChange,
            ]
        )
        #expect(
            NotificationType.allKnown.map(\.rawValue) == [
                "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW",
                "EXPIRED", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED",
                "CONSUMPTION_REQUEST", "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED",
                "EXTERNAL_PURCHASE_TOKEN", "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION",
                "PRICE_CHANGE",
            ]
        )
    }

    @Test func offerDiscountTypeKnownValues() {
        #expect(OfferDiscountType.allKnown == [.freeTrial, .payAsYouGo, .payUpFront, .oneTime])
        #expect(
            OfferDiscountType.allKnown.map(\.rawValue) == ["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME"]
        )
    }

    @Test func offerTypeKnownValues() {
        #expect(OfferType.allKnown == [.introductoryOffer, .promotionalOffer, .offerCode, .winBackOffer])
        #expect(OfferType.allKnown.map(\.rawValue) == [1, 2, 3, 4])
    }

    @Test func priceIncreaseStatusKnownValues() {
        #expect(
            PriceIncreaseStatus.allKnown == [
                .customerHasNotResponded, .customerConsentedOrWasNotifiedWithoutNeedingConsent,
            ]
        )
        #expect(PriceIncreaseStatus.allKnown.map(\.rawValue) == [0, 1])
    }

    @Test func productTypeKnownValues() {
        #expect(
            ProductType.allKnown == [.autoRenewableSubscription, .nonConsumable, .consumable, .nonRenewingSubscription]
        )
        #expect(
            ProductType.allKnown.map(\.rawValue) == [
                "Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription",
            ]
        )
    }

    @Test func purchasePlatformKnownValues() {
        #expect(PurchasePlatform.allKnown == [.iOS, .macOS, .tvOS, .visionOS])
        #expect(PurchasePlatform.allKnown.map(\.rawValue) == ["iOS", "macOS", "tvOS", "visionOS"])
    }

    @Test func renewalBillingPlanTypeKnownValues() {
        #expect(RenewalBillingPlanType.allKnown == [.billedUpfront, .monthly])
        #expect(RenewalBillingPlanType.allKnown.map(\.rawValue) == ["BILLED_UPFRONT", "MONTHLY"])
    }

    @Test func revocationReasonKnownValues() {
        #expect(RevocationReason.allKnown == [.refundedDueToIssue, .refundedForOtherReason])
        #expect(RevocationReason.allKnown.map(\.rawValue) == [1, 0])
    }

    @Test func revocationTypeKnownValues() {
        #expect(RevocationType.allKnown == [.refundFull, .refundProrated, .familyRevoke])
        #expect(RevocationType.allKnown.map(\.rawValue) == ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"])
    }

    @Test func subscriptionStatusKnownValues() {
        #expect(SubscriptionStatus.allKnown == [.active, .expired, .billingRetry, .billingGracePeriod, .revoked])
        #expect(SubscriptionStatus.allKnown.map(\.rawValue) == [1, 2, 3, 4, 5])
    }

    @Test func notificationSubtypeKnownValues() {
        #expect(
            NotificationSubtype.allKnown == [
                .initialBuy, .resubscribe, .downgrade, .upgrade, .autoRenewEnabled, .autoRenewDisabled, .voluntary,
                .billingRetry, .priceIncrease, .gracePeriod, .pending, .accepted, .billingRecovery, .productNotForSale,
                .summary, .failure, .unreported,
            ]
        )
        #expect(
            NotificationSubtype.allKnown.map(\.rawValue) == [
                "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED",
                "VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED",
                "BILLING_RECOVERY", "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED",
            ]
        )
    }

    @Test func transactionReasonKnownValues() {
        #expect(TransactionReason.allKnown == [.purchase, .renewal])
        #expect(TransactionReason.allKnown.map(\.rawValue) == ["PURCHASE", "RENEWAL"])
    }
}
