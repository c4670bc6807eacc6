import Foundation
import IAPCore
import Testing

/// The hand-written payload writer must produce exactly the bytes `JSONEncoder` (with
/// `AppStoreJSON.makeEncoder()`) produces, for every payload kind and every value a field can hold.
@Suite("App Store JSON writer")
struct AppStoreJSONWriterTests {
    /// Generates payloads whose every field is absent or present, with edge numbers and dates, strings full of
    /// escapes and non-ASCII text, and enumeration values Apple has not defined.
    final class Generator {
        enum Mode {
            /// Each field present two times in three.
            case mixed
            /// Every field present (nested objects too), to prove the writer leaves none out.
            case everyField
        }

        var state: UInt64
        var mode = Mode.mixed

        init(seed: UInt64) {
            state = seed
        }

        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        func pick<T>(_ choices: [T]) -> T {
            choices[Int(next() % UInt64(choices.count))]
        }

        func maybe<T>(_ value: @autoclosure () -> T) -> T? {
            mode == .mixed && next() % 3 == 0 ? nil : value()
        }

        func text() -> String {
            let pieces = [
                "a", "Z", "9", "com.example.app", "2000000812345678", "\"", "\\", "/", "//", "\\/", "\u{0}", "\u{1}",
                "\u{8}", "\u{9}", "\u{A}", "\u{B}", "\u{C}", "\u{D}", "\u{1B}", "\u{1F}", "\u{7F}", "\u{80}", "\u{85}",
                "é", "e\u{301}", "ß", "日本", "😀", "👩‍👩‍👧", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFD}", " ", "{",
                "}", "[", ",", ":", "\\u0041", "</script>", "null",
            ]
            return (0..<Int(next() % 9)).map { _ in pick(pieces) }.joined()
        }

        func int64() -> Int64 {
            pick([0, 1, -1, 9_990, Int64.max, Int64.min, Int64(Int32.max) + 1, Int64(bitPattern: next())])
        }

        func int32() -> Int32 {
            pick([0, 1, -1, 50_000, Int32.max, Int32.min, Int32(truncatingIfNeeded: next())])
        }

        func date() -> Date {
            let limit = AppStoreJSON.maximumMilliseconds
            let milliseconds = pick([
                0, -1, 1, 1_767_225_600_000, -62_135_769_600_000, limit, -limit,
                Int64(bitPattern: next() % UInt64(limit)) - limit / 2,
            ])
            switch next() % 4 {
            case 0:
                // Xcode's fractional milliseconds, halves included: the writer must round as the encoder does.
                let fraction = pick([0.25, 0.5, 0.4999, 0.75, 0.9999])
                return Date(timeIntervalSince1970: (Double(milliseconds) + fraction) / 1000)
            case 1:
                // Far beyond what a decoder accepts, yet within 64-bit milliseconds.
                return Date(timeIntervalSince1970: pick([9.2e15, -9.2e15, 1e12]))
            default:
                return Date(millisecondsSince1970: milliseconds)
            }
        }

        func bool() -> Bool {
            next() % 2 == 0
        }

        func texts() -> [String] {
            (0..<Int(next() % 4)).map { _ in text() }
        }

        func open<E: OpenEnumeration>(_ type: E.Type) -> E where E.RawValue == String {
            bool() ? pick(E.allKnown) : E(rawValue: text())
        }

        func open<E: OpenEnumeration>(_ type: E.Type) -> E where E.RawValue == Int32 {
            bool() ? pick(E.allKnown) : E(rawValue: int32())
        }

        // MARK: Payloads

        func transaction() -> TransactionPayload {
            TransactionPayload(
                originalTransactionId: maybe(text()),
                transactionId: maybe(text()),
                webOrderLineItemId: maybe(text()),
                bundleId: maybe(text()),
                productId: maybe(text()),
                subscriptionGroupIdentifier: maybe(text()),
                purchaseDate: maybe(date()),
                originalPurchaseDate: maybe(date()),
                expiresDate: maybe(date()),
                quantity: maybe(int32()),
                type: maybe(open(ProductType.self)),
                appAccountToken: maybe(text()),
                inAppOwnershipType: maybe(open(InAppOwnershipType.self)),
                signedDate: maybe(date()),
                revocationReason: maybe(open(RevocationReason.self)),
                revocationDate: maybe(date()),
                isUpgraded: maybe(bool()),
                offerType: maybe(open(OfferType.self)),
                offerIdentifier: maybe(text()),
                environment: maybe(open(AppStoreEnvironment.self)),
                storefront: maybe(text()),
                storefrontId: maybe(text()),
                transactionReason: maybe(open(TransactionReason.self)),
                currency: maybe(text()),
                price: maybe(int64()),
                offerDiscountType: maybe(open(OfferDiscountType.self)),
                appTransactionId: maybe(text()),
                offerPeriod: maybe(text()),
                revocationType: maybe(open(RevocationType.self)),
                revocationPercentage: maybe(int32()),
                advancedCommerceInfo: maybe(advancedCommerceTransaction()),
                billingPlanType: maybe(open(BillingPlanType.self)),
                commitmentInfo: maybe(
                    TransactionCommitmentInfo(
                        billingPeriodNumber: maybe(int32()),
                        commitmentExpiresDate: maybe(date()),
                        commitmentPrice: maybe(int64()),
                        totalBillingPeriods: maybe(int32())
                    )
                )
            )
        }

        func advancedCommerceTransaction() -> AdvancedCommerceTransactionInfo {
            AdvancedCommerceTransactionInfo(
                descriptors: maybe(descriptors()),
                estimatedTax: maybe(int64()),
                items: maybe(
                    (0..<Int(next() % 3) + (mode == .everyField ? 1 : 0)).map { _ in
                        AdvancedCommerceTransactionItem(
                            sku: maybe(text()),
                            description: maybe(text()),
                            displayName: maybe(text()),
                            offer: maybe(offer()),
                            price: maybe(int64()),
                            refunds: maybe(
                                (0..<Int(next() % 3) + (mode == .everyField ? 1 : 0)).map { _ in
                                    AdvancedCommerceRefund(
                                        refundAmount: maybe(int64()),
                                        refundDate: maybe(date()),
                                        refundReason: maybe(text()),
                                        refundType: maybe(text())
                                    )
                                }
                            ),
                            revocationDate: maybe(date())
                        )
                    }
                ),
                period: maybe(text()),
                requestReferenceId: maybe(text()),
                taxCode: maybe(text()),
                taxExclusivePrice: maybe(int64()),
                taxRate: maybe(text())
            )
        }

        func descriptors() -> AdvancedCommerceDescriptors {
            AdvancedCommerceDescriptors(description: maybe(text()), displayName: maybe(text()))
        }

        func offer() -> AdvancedCommerceOffer {
            AdvancedCommerceOffer(
                period: maybe(text()),
                periodCount: maybe(int32()),
                price: maybe(int64()),
                reason: maybe(text())
            )
        }

        func renewal() -> RenewalInfoPayload {
            RenewalInfoPayload(
                expirationIntent: maybe(open(ExpirationIntent.self)),
                originalTransactionId: maybe(text()),
                autoRenewProductId: maybe(text()),
                productId: maybe(text()),
                autoRenewStatus: maybe(open(AutoRenewStatus.self)),
                isInBillingRetryPeriod: maybe(bool()),
                priceIncreaseStatus: maybe(open(PriceIncreaseStatus.self)),
                gracePeriodExpiresDate: maybe(date()),
                offerType: maybe(open(OfferType.self)),
                offerIdentifier: maybe(text()),
                signedDate: maybe(date()),
                environment: maybe(open(AppStoreEnvironment.self)),
                recentSubscriptionStartDate: maybe(date()),
                renewalDate: maybe(date()),
                currency: maybe(text()),
                renewalPrice: maybe(int64()),
                offerDiscountType: maybe(open(OfferDiscountType.self)),
                eligibleWinBackOfferIds: maybe(texts()),
                appAccountToken: maybe(text()),
                appTransactionId: maybe(text()),
                offerPeriod: maybe(text()),
                advancedCommerceInfo: maybe(
                    AdvancedCommerceRenewalInfo(
                        consistencyToken: maybe(text()),
                        descriptors: maybe(descriptors()),
                        items: maybe(
                            (0..<Int(next() % 3) + (mode == .everyField ? 1 : 0)).map { _ in
                                AdvancedCommerceRenewalItem(
                                    sku: maybe(text()),
                                    description: maybe(text()),
                                    displayName: maybe(text()),
                                    offer: maybe(offer()),
                                    price: maybe(int64()),
                                    priceIncreaseInfo: maybe(
                                        AdvancedCommercePriceIncreaseInfo(
                                            dependentSKUs: maybe(texts()),
                                            price: maybe(int64()),
                                            status: maybe(text())
                                        )
                                    )
                                )
                            }
                        ),
                        period: maybe(text()),
                        requestReferenceId: maybe(text()),
                        taxCode: maybe(text())
                    )
                ),
                commitmentInfo: maybe(
                    RenewalCommitmentInfo(
                        commitmentAutoRenewProductId: maybe(text()),
                        commitmentAutoRenewStatus: maybe(open(AutoRenewStatus.self)),
                        commitmentRenewalBillingPlanType: maybe(open(RenewalBillingPlanType.self)),
                        commitmentRenewalDate: maybe(date()),
                        commitmentRenewalPrice: maybe(int64())
                    )
                ),
                renewalBillingPlanType: maybe(open(RenewalBillingPlanType.self))
            )
        }

        func notification() -> NotificationPayload {
            NotificationPayload(
                notificationType: maybe(open(NotificationType.self)),
                subtype: maybe(open(NotificationSubtype.self)),
                notificationUUID: maybe(text()),
                data: maybe(
                    NotificationData(
                        environment: maybe(open(AppStoreEnvironment.self)),
                        appAppleId: maybe(int64()),
                        bundleId: maybe(text()),
                        bundleVersion: maybe(text()),
                        signedTransactionInfo: maybe(text()),
                        signedRenewalInfo: maybe(text()),
                        status: maybe(open(SubscriptionStatus.self)),
                        consumptionRequestReason: maybe(open(ConsumptionRequestReason.self))
                    )
                ),
                version: maybe(text()),
                signedDate: maybe(date()),
                summary: maybe(
                    NotificationSummary(
                        environment: maybe(open(AppStoreEnvironment.self)),
                        appAppleId: maybe(int64()),
                        bundleId: maybe(text()),
                        productId: maybe(text()),
                        requestIdentifier: maybe(text()),
                        storefrontCountryCodes: maybe(texts()),
                        succeededCount: maybe(int64()),
                        failedCount: maybe(int64())
                    )
                ),
                externalPurchaseToken: maybe(
                    ExternalPurchaseToken(
                        externalPurchaseId: maybe(text()),
                        tokenCreationDate: maybe(int64()),
                        appAppleId: maybe(int64()),
                        bundleId: maybe(text())
                    )
                ),
                appData: maybe(
                    AppData(
                        appAppleId: maybe(int64()),
                        bundleId: maybe(text()),
                        environment: maybe(open(AppStoreEnvironment.self)),
                        signedAppTransactionInfo: maybe(text())
                    )
                )
            )
        }

        func appTransaction() -> AppTransactionPayload {
            AppTransactionPayload(
                receiptType: maybe(open(AppStoreEnvironment.self)),
                appAppleId: maybe(int64()),
                bundleId: maybe(text()),
                applicationVersion: maybe(text()),
                versionExternalIdentifier: maybe(int64()),
                receiptCreationDate: maybe(date()),
                originalPurchaseDate: maybe(date()),
                originalApplicationVersion: maybe(text()),
                deviceVerification: maybe(text()),
                deviceVerificationNonce: maybe(text()),
                preorderDate: maybe(date()),
                appTransactionId: maybe(text()),
                originalPlatform: maybe(open(PurchasePlatform.self))
            )
        }
    }

    static func written(_ append: (inout AppStoreJSONWriter) throws -> Void) throws -> String {
        var writer = AppStoreJSONWriter()
        try append(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func encoded(_ value: some Encodable) throws -> String {
        String(decoding: try AppStoreJSON.makeEncoder().encode(value), as: UTF8.self)
    }

    /// Checks `count` generated payloads of one kind byte for byte.
    static func compare<Payload: Encodable>(
        count: Int,
        seed: UInt64,
        make: (Generator) -> Payload,
        append: (inout AppStoreJSONWriter, Payload) throws -> Void
    ) throws {
        let random = Generator(seed: seed)
        for round in 0..<count {
            random.mode = round % 10 == 0 ? .everyField : .mixed
            let payload = make(random)
            let expected = try encoded(payload)
            let actual = try written { try append(&$0, payload) }
            #expect(actual == expected, "payload \(round)")
            if actual != expected {
                return
            }
        }
    }

    @Test func transactionsMatchJSONEncoder() throws {
        try Self.compare(count: 3_000, seed: 1, make: { $0.transaction() }, append: { try $0.append($1) })
    }

    @Test func renewalInfosMatchJSONEncoder() throws {
        try Self.compare(count: 3_000, seed: 2, make: { $0.renewal() }, append: { try $0.append($1) })
    }

    @Test func notificationsMatchJSONEncoder() throws {
        try Self.compare(count: 3_000, seed: 3, make: { $0.notification() }, append: { try $0.append($1) })
    }

    @Test func appTransactionsMatchJSONEncoder() throws {
        try Self.compare(count: 3_000, seed: 4, make: { $0.appTransaction() }, append: { try $0.append($1) })
    }

    @Test func verifiedDataOfEachKindIsWrittenAsItsPayload() throws {
        let random = Generator(seed: 5)
        random.mode = .everyField
        let transaction = random.transaction()
        let renewal = random.renewal()
        let notification = VerifiedNotification(payload: random.notification(), transaction: transaction)
        let app = random.appTransaction()
        #expect(
            try Self.written { try $0.append(VerifiedSignedData.transaction(transaction)) } == Self.encoded(transaction)
        )
        #expect(try Self.written { try $0.append(VerifiedSignedData.renewal(renewal)) } == Self.encoded(renewal))
        // A notification prints its own payload; the nested data stays the JWS strings it carries.
        #expect(
            try Self.written { try $0.append(VerifiedSignedData.notification(notification)) }
                == Self.encoded(notification.payload)
        )
        #expect(try Self.written { try $0.append(VerifiedSignedData.appTransaction(app)) } == Self.encoded(app))
    }

    /// The number of members `JSONEncoder` writes for a value with every field set, against the number of stored
    /// properties the type has.
    static func memberCount(_ value: (some Encodable)?) throws -> (written: Int, stored: Int) {
        let value = try #require(value)
        let object = try JSONSerialization.jsonObject(with: AppStoreJSON.makeEncoder().encode(value))
        return (try #require(object as? [String: Any]).count, Mirror(reflecting: value).children.count)
    }

    /// Every stored property of every payload type, nested ones included, is set by the generator's `everyField`
    /// mode: a field added to a model but not to the generator fails here (and one missing from the writer then
    /// fails the comparisons above).
    @Test func theGeneratorSetsEveryField() throws {
        let random = Generator(seed: 6)
        random.mode = .everyField
        let transaction = random.transaction()
        let renewal = random.renewal()
        let notification = random.notification()
        let item = transaction.advancedCommerceInfo?.items?.first
        let renewalItem = renewal.advancedCommerceInfo?.items?.first
        let counts = [
            try Self.memberCount(transaction), try Self.memberCount(transaction.advancedCommerceInfo),
            try Self.memberCount(item), try Self.memberCount(item?.refunds?.first), try Self.memberCount(item?.offer),
            try Self.memberCount(transaction.advancedCommerceInfo?.descriptors),
            try Self.memberCount(transaction.commitmentInfo), try Self.memberCount(renewal),
            try Self.memberCount(renewal.advancedCommerceInfo), try Self.memberCount(renewalItem),
            try Self.memberCount(renewalItem?.priceIncreaseInfo), try Self.memberCount(renewal.commitmentInfo),
            try Self.memberCount(notification), try Self.memberCount(notification.data),
            try Self.memberCount(notification.summary), try Self.memberCount(notification.externalPurchaseToken),
            try Self.memberCount(notification.appData), try Self.memberCount(random.appTransaction()),
        ]
        for (index, count) in counts.enumerated() {
            #expect(count.written == count.stored, "value \(index)")
        }
    }

    @Test func aDateBeyond64BitMillisecondsThrowsLikeJSONEncoder() {
        for seconds in [1e17, -1e17, .infinity, -.infinity, .nan] {
            let payload = TransactionPayload(transactionId: "1", signedDate: Date(timeIntervalSince1970: seconds))
            #expect(throws: EncodingError.self) { try AppStoreJSON.makeEncoder().encode(payload) }
            #expect(throws: EncodingError.self) { try Self.written { try $0.append(payload) } }
        }
    }

    @Test func escapesLikeJSONEncoderAndLeavesSlashesAlone() throws {
        let payload = TransactionPayload(productId: "a/b\"c\\d\u{1}\u{7F}\n\té😀</x>")
        let written = try Self.written { try $0.append(payload) }
        #expect(written == #"{"productId":"a/b\"c\\d\u0001"# + "\u{7F}" + #"\n\té😀</x>"}"#)
        #expect(written == (try Self.encoded(payload)))
    }
}
