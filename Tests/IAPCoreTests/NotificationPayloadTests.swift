import Foundation
import IAPCore
import IAPTestSupport
import Testing

@Suite struct NotificationPayloadTests {
    @Test func decodesSubscribedNotification() throws {
        let notification = try Fixture.decode(NotificationPayload.self, "signedNotification")

        #expect(notification.notificationType == .subscribed)
        #expect(notification.notificationType?.rawValue == "SUBSCRIBED")
        #expect(notification.subtype == .initialBuy)
        #expect(notification.subtype?.rawValue == "INITIAL_BUY")
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(ms(notification.signedDate) == 1_698_148_900_000)
        #expect(notification.signingDate == notification.signedDate)
        #expect(notification.summary == nil)
        #expect(notification.externalPurchaseToken == nil)
        #expect(notification.appData == nil)

        let data = try #require(notification.data)
        #expect(data.environment == .localTesting)
        #expect(data.environment?.rawValue == "LocalTesting")
        #expect(data.appAppleId == 41_234)
        #expect(data.bundleId == "com.example")
        #expect(data.bundleVersion == "1.2.3")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo == "signed_renewal_info_value")
        #expect(data.status == .active)
        #expect(data.status?.rawValue == 1)
        #expect(data.consumptionRequestReason == nil)
    }

    @Test func decodesConsumptionRequestNotification() throws {
        let notification = try Fixture.decode(NotificationPayload.self, "signedConsumptionRequestNotification")

        #expect(notification.notificationType == .consumptionRequest)
        #expect(notification.notificationType?.rawValue == "CONSUMPTION_REQUEST")
        #expect(notification.subtype == nil)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(ms(notification.signedDate) == 1_698_148_900_000)
        #expect(
            notification.data
                == NotificationData(
                    environment: .localTesting,
                    appAppleId: 41_234,
                    bundleId: "com.example",
                    bundleVersion: "1.2.3",
                    signedTransactionInfo: "signed_transaction_info_value",
                    signedRenewalInfo: "signed_renewal_info_value",
                    status: .active,
                    consumptionRequestReason: .unintendedPurchase
                )
        )
        #expect(notification.data?.consumptionRequestReason?.rawValue == "UNINTENDED_PURCHASE")
    }

    @Test func decodesSummaryNotification() throws {
        let notification = try Fixture.decode(NotificationPayload.self, "signedSummaryNotification")

        #expect(notification.notificationType == .renewalExtension)
        #expect(notification.notificationType?.rawValue == "RENEWAL_EXTENSION")
        #expect(notification.subtype == .summary)
        #expect(notification.subtype?.rawValue == "SUMMARY")
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(ms(notification.signedDate) == 1_698_148_900_000)
        #expect(notification.data == nil)

        let summary = try #require(notification.summary)
        #expect(summary.environment == .localTesting)
        #expect(summary.appAppleId == 41_234)
        #expect(summary.bundleId == "com.example")
        #expect(summary.productId == "com.example.product")
        #expect(summary.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(summary.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.succeededCount == 5)
        #expect(summary.failedCount == 2)
    }

    @Test(arguments: [
        (
            "signedExternalPurchaseTokenNotification", "b2158121-7af9-49d4-9561-1f588205523e",
            AppStoreEnvironment.production
        ),
        (
            "signedExternalPurchaseTokenSandboxNotification", "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e",
            AppStoreEnvironment.sandbox
        ),
    ])
    func decodesExternalPurchaseTokenNotification(
        fixture: String,
        externalPurchaseId: String,
        environment: AppStoreEnvironment
    ) throws {
        let notification = try Fixture.decode(NotificationPayload.self, fixture)

        #expect(notification.notificationType == .externalPurchaseToken)
        #expect(notification.notificationType?.rawValue == "EXTERNAL_PURCHASE_TOKEN")
        #expect(notification.subtype == .unreported)
        #expect(notification.subtype?.rawValue == "UNREPORTED")
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(ms(notification.signedDate) == 1_698_148_900_000)
        #expect(notification.data == nil)

        let token = try #require(notification.externalPurchaseToken)
        #expect(token.externalPurchaseId == externalPurchaseId)
        #expect(token.tokenCreationDate == 1_698_148_950_000)
        #expect(token.appAppleId == 55_555)
        #expect(token.bundleId == "com.example")
        #expect(token.derivedEnvironment == environment)
        #expect(ExternalPurchaseToken().derivedEnvironment == nil)
    }

    @Test func decodesRescindConsentNotification() throws {
        let notification = try Fixture.decode(NotificationPayload.self, "signedRescindConsentNotification")

        #expect(notification.notificationType == .rescindConsent)
        #expect(notification.notificationType?.rawValue == "RESCIND_CONSENT")
        #expect(notification.subtype == nil)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(ms(notification.signedDate) == 1_698_148_900_000)
        #expect(notification.data == nil)
        #expect(
            notification.appData
                == AppData(
                    appAppleId: 41_234,
                    bundleId: "com.example",
                    environment: .localTesting,
                    signedAppTransactionInfo: "signed_app_transaction_info_value"
                )
        )
    }

    @Test func decodesAppData() throws {
        let appData = try Fixture.decode(AppData.self, "appData")

        #expect(appData.appAppleId == 987_654_321)
        #expect(appData.bundleId == "com.example")
        #expect(appData.environment == .sandbox)
        #expect(appData.environment?.rawValue == "Sandbox")
        #expect(appData.signedAppTransactionInfo == "signed-app-transaction-info")
    }

    @Test(arguments: [
        "signedNotification",
        "signedConsumptionRequestNotification",
        "signedSummaryNotification",
        "signedExternalPurchaseTokenNotification",
        "signedExternalPurchaseTokenSandboxNotification",
        "signedRescindConsentNotification",
    ])
    func reencodesAppleFixtureWithoutLosingAField(fixture: String) throws {
        try expectReencodesIdentically(NotificationPayload.self, fixture: fixture)
        try expectRoundTrip(try Fixture.decode(NotificationPayload.self, fixture))
    }

    @Test func reencodesAppDataWithoutLosingAField() throws {
        try expectReencodesIdentically(AppData.self, fixture: "appData")
    }

    @Test func keepsUnknownNotificationTypeSubtypeAndStatus() throws {
        let json = """
            {"notificationType":"SUBSCRIPTION_PAUSED","subtype":"BY_CUSTOMER",
             "data":{"status":6,"environment":"LocalTestingxxx","consumptionRequestReason":"CHANGED_MIND"}}
            """
        let notification = try decode(NotificationPayload.self, json: json)

        #expect(notification.notificationType?.rawValue == "SUBSCRIPTION_PAUSED")
        #expect(notification.notificationType?.isKnown == false)
        #expect(notification.subtype?.rawValue == "BY_CUSTOMER")
        #expect(notification.subtype?.isKnown == false)
        #expect(notification.data?.status == SubscriptionStatus(rawValue: 6))
        #expect(notification.data?.status?.isKnown == false)
        #expect(notification.data?.environment?.rawValue == "LocalTestingxxx")
        #expect(notification.data?.environment?.isKnown == false)
        #expect(notification.data?.consumptionRequestReason?.rawValue == "CHANGED_MIND")
        let reencoded = try AppStoreJSON.makeEncoder().encode(notification)
        #expect(try canonicalJSON(reencoded) == canonicalJSON(Data(json.utf8)))
    }

    @Test func ignoresUnknownKeysAtEveryLevel() throws {
        let notification = try decode(
            NotificationPayload.self,
            json: #"{"notificationUUID":"u","newTopLevel":true,"data":{"bundleId":"b","newInData":[1]}}"#
        )
        #expect(notification == NotificationPayload(notificationUUID: "u", data: NotificationData(bundleId: "b")))
    }

    @Test func rejectsWrongTypes() {
        #expect(throws: DecodingError.self) {
            try decode(NotificationPayload.self, json: #"{"data":{"appAppleId":"hi"}}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(NotificationPayload.self, json: #"{"summary":{"succeededCount":"5"}}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(NotificationPayload.self, json: #"{"externalPurchaseToken":{"tokenCreationDate":"1"}}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(NotificationPayload.self, json: #"{"data":{"status":"1"}}"#)
        }
        #expect(throws: DecodingError.self) {
            try decode(NotificationPayload.self, json: #"{"signedDate":null,"data":[]}"#)
        }
    }

    @Test func verifiedNotificationsCompareByEveryPart() {
        let payload = NotificationPayload(notificationType: .refund, notificationUUID: "u")
        let refunded = TransactionPayload(transactionId: "1", revocationDate: Date(millisecondsSince1970: 10))
        let first = VerifiedNotification(payload: payload, transaction: refunded)

        #expect(first == VerifiedNotification(payload: payload, transaction: refunded))
        #expect(first != VerifiedNotification(payload: payload, transaction: TransactionPayload(transactionId: "1")))
        #expect(first != VerifiedNotification(payload: payload))
        #expect(Set([first, first]).count == 1)
    }
}
