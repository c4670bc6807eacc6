import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// 2024-01-01T00:00:00Z.
private let start = Date(timeIntervalSince1970: 1_704_067_200)

/// `start` plus a number of days.
private func day(_ days: Double) -> Date {
    start.addingTimeInterval(days * 86_400)
}

private func makeCatalog() throws -> StaticProductCatalog {
    try StaticProductCatalog(products: [
        CatalogProduct(productId: "coins", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
        CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlements: ["premium", "themes"]),
        CatalogProduct(
            productId: "pro.yearly",
            kind: .autoRenewable,
            subscriptionGroupId: "pro",
            groupLevel: 1,
            entitlements: ["pro", "extras"]
        ),
        CatalogProduct(
            productId: "pro.monthly",
            kind: .autoRenewable,
            subscriptionGroupId: "pro",
            groupLevel: 2,
            entitlements: ["pro"]
        ),
        CatalogProduct(productId: "news", kind: .autoRenewable, subscriptionGroupId: "news", entitlements: ["news"]),
        CatalogProduct(
            productId: "pass",
            kind: .nonRenewing,
            entitlements: ["season"],
            duration: SubscriptionPeriod(value: 1, unit: .month)
        ),
    ])
}

/// A ledger entry for a transaction, delivered unless told otherwise.
private func entry(
    _ transactionId: String,
    _ productId: String,
    original: String? = nil,
    purchased: Date,
    expires: Date? = nil,
    quantity: Int32? = nil,
    revoked: Date? = nil,
    upgraded: Bool? = nil,
    familyShared: Bool = false,
    delivery: DeliveryState = .delivered
) -> LedgerEntry {
    let originalId = original ?? transactionId
    let transaction = TransactionPayload(
        originalTransactionId: originalId,
        transactionId: transactionId,
        productId: productId,
        purchaseDate: purchased,
        expiresDate: expires,
        quantity: quantity,
        inAppOwnershipType: familyShared ? .familyShared : .purchased,
        revocationDate: revoked,
        isUpgraded: upgraded
    )
    var entry = LedgerEntry(
        transaction: transaction,
        transactionId: transactionId,
        originalTransactionId: originalId,
        userId: "user",
        productId: productId,
        recordedAt: purchased
    )
    entry.deliveryState = delivery
    return entry
}

/// A renewal info of a subscription.
private func renewal(
    _ originalTransactionId: String,
    _ productId: String,
    signed: Date,
    autoRenew: AutoRenewStatus = .on,
    renewsTo: String? = nil,
    billingRetry: Bool? = nil,
    graceEnds: Date? = nil
) -> RenewalInfoPayload {
    RenewalInfoPayload(
        originalTransactionId: originalTransactionId,
        autoRenewProductId: renewsTo ?? productId,
        productId: productId,
        autoRenewStatus: autoRenew,
        isInBillingRetryPeriod: billingRetry,
        gracePeriodExpiresDate: graceEnds,
        signedDate: signed
    )
}

@Suite struct SubscriptionLifecycleTests {
    let engine: EntitlementEngine

    init() throws {
        engine = EntitlementEngine(catalog: try makeCatalog())
    }

    private func pro(
        _ entries: [LedgerEntry],
        _ renewals: [RenewalInfoPayload] = [],
        at instant: Date
    ) throws -> (ProductEntitlement, EntitlementSnapshot) {
        let snapshot = engine.evaluate(entries: entries, renewalInfos: renewals, at: instant)
        let subscription = try #require(snapshot.entitlement(subscriptionGroupId: "pro"))
        #expect(snapshot.entitlements.filter { $0.subscriptionGroupId == "pro" }.count == 1)
        return (subscription, snapshot)
    }

    private let first = entry("1", "pro.monthly", purchased: day(0), expires: day(30))
    private let renewed = entry("2", "pro.monthly", original: "1", purchased: day(30), expires: day(60))

    @Test func subscribeGivesAccessUntilExpiry() throws {
        let (pro, snapshot) = try pro([first], [renewal("1", "pro.monthly", signed: day(0))], at: day(1))

        #expect(pro.state == .active)
        #expect(pro.hasAccess)
        #expect(pro.productId == "pro.monthly")
        #expect(pro.kind == .autoRenewable)
        #expect(pro.expiresDate == day(30))
        #expect(pro.originalTransactionId == "1")
        #expect(pro.transactionId == "1")
        #expect(pro.subscriptionGroupId == "pro")
        #expect(pro.autoRenewProductId == nil)
        #expect(!pro.isFamilyShared)
        #expect(snapshot.entitlementIds == ["pro"])
        #expect(snapshot.instant == day(1))
    }

    @Test func renewalMovesToTheNewTransaction() throws {
        let (pro, _) = try pro([renewed, first], [renewal("1", "pro.monthly", signed: day(30))], at: day(31))

        #expect(pro.state == .active)
        #expect(pro.transactionId == "2")
        #expect(pro.originalTransactionId == "1")
        #expect(pro.expiresDate == day(60))
    }

    @Test func withoutRenewalInfoDatesAloneDecide() throws {
        #expect(try pro([first], at: day(29)).0.state == .active)
        #expect(try pro([first], at: day(30)).0.state == .expired)
        let (expired, snapshot) = try pro([first], at: day(31))
        #expect(!expired.hasAccess)
        #expect(expired.expiresDate == day(30))
        #expect(snapshot.entitlementIds.isEmpty)
    }

    @Test func failedRenewalWithGracePeriodKeepsAccessUntilGraceEnds() throws {
        let failing = renewal("1", "pro.monthly", signed: day(30), billingRetry: true, graceEnds: day(36))

        let (grace, snapshot) = try pro([first], [failing], at: day(31))
        #expect(grace.state == .gracePeriod)
        #expect(grace.hasAccess)
        #expect(grace.expiresDate == day(36))
        #expect(snapshot.entitlementIds == ["pro"])

        // The grace period ends while the App Store keeps retrying.
        let (retrying, after) = try pro([first], [failing], at: day(37))
        #expect(retrying.state == .billingRetry)
        #expect(!retrying.hasAccess)
        #expect(retrying.expiresDate == day(30))
        #expect(after.entitlementIds.isEmpty)
    }

    @Test func failedRenewalWithoutGracePeriodLosesAccess() throws {
        let failing = renewal("1", "pro.monthly", signed: day(30), billingRetry: true)

        let (pro, snapshot) = try pro([first], [failing], at: day(31))
        #expect(pro.state == .billingRetry)
        #expect(!pro.hasAccess)
        #expect(snapshot.entitlementIds.isEmpty)
    }

    @Test func recoveryFromBillingRetryRestoresAccess() throws {
        let failing = renewal("1", "pro.monthly", signed: day(30), billingRetry: true)
        let recovered = entry("2", "pro.monthly", original: "1", purchased: day(33), expires: day(63))
        let healthy = renewal("1", "pro.monthly", signed: day(33), billingRetry: false)

        let (pro, _) = try pro([first, recovered], [failing, healthy], at: day(34))
        #expect(pro.state == .active)
        #expect(pro.transactionId == "2")
        #expect(pro.expiresDate == day(63))

        // The renewal transaction alone is enough: a stale renewal info does not take access away.
        let (stale, _) = try self.pro([first, recovered], [failing], at: day(34))
        #expect(stale.state == .active)
    }

    @Test func billingRetryGivingUpExpires() throws {
        let failing = renewal("1", "pro.monthly", signed: day(30), billingRetry: true, graceEnds: day(36))
        let gaveUp = renewal("1", "pro.monthly", signed: day(90), autoRenew: .off, billingRetry: false)

        let (pro, _) = try pro([first], [gaveUp, failing], at: day(91))
        #expect(pro.state == .expired)
        #expect(!pro.hasAccess)
        #expect(pro.expiresDate == day(30))
    }

    @Test func turningAutoRenewOffKeepsAccessUntilExpiry() throws {
        let cancelled = renewal("1", "pro.monthly", signed: day(10), autoRenew: .off)

        let (pro, snapshot) = try pro([first], [cancelled], at: day(11))
        #expect(pro.state == .willExpire)
        #expect(pro.hasAccess)
        #expect(pro.expiresDate == day(30))
        #expect(snapshot.entitlementIds == ["pro"])

        #expect(try self.pro([first], [cancelled], at: day(31)).0.state == .expired)
    }

    @Test func turningAutoRenewBackOnIsActiveAgainWhateverTheInputOrder() throws {
        let cancelled = renewal("1", "pro.monthly", signed: day(10), autoRenew: .off)
        let reenabled = renewal("1", "pro.monthly", signed: day(12), autoRenew: .on)

        #expect(try pro([first], [cancelled, reenabled], at: day(13)).0.state == .active)
        #expect(try pro([first], [reenabled, cancelled], at: day(13)).0.state == .active)
    }

    @Test func renewalInfoOfAnotherSubscriptionIsIgnored() throws {
        let other = renewal("999", "pro.monthly", signed: day(10), autoRenew: .off)

        #expect(try pro([first], [other], at: day(11)).0.state == .active)
    }

    @Test func refundRevokesAndReversalRestores() throws {
        let refunded = entry("1", "pro.monthly", purchased: day(0), expires: day(30), revoked: day(5))

        let (pro, snapshot) = try pro([refunded], [renewal("1", "pro.monthly", signed: day(5))], at: day(6))
        #expect(pro.state == .revoked)
        #expect(!pro.hasAccess)
        #expect(snapshot.entitlementIds.isEmpty)

        // The ledger's own revocation mark counts even if the stored transaction has none.
        var markedByLedger = first
        markedByLedger.revokedAt = day(5)
        #expect(try self.pro([markedByLedger], at: day(6)).0.state == .revoked)

        // REFUND_REVERSED: the transaction is re-signed without a revocation and the ledger mark is cleared.
        var reversed = refunded
        reversed.transaction.revocationDate = nil
        reversed.revokedAt = nil
        reversed.revision = 1
        let (restored, after) = try self.pro([refunded, reversed], at: day(7))
        #expect(restored.state == .active)
        #expect(after.entitlementIds == ["pro"])
    }

    @Test func refundOfTheLatestRenewalRevokesTheSubscription() throws {
        let refundedRenewal = entry(
            "2",
            "pro.monthly",
            original: "1",
            purchased: day(30),
            expires: day(60),
            revoked: day(31)
        )

        let (pro, _) = try pro([first, refundedRenewal], at: day(32))
        #expect(pro.state == .revoked)
        #expect(pro.transactionId == "2")
    }

    @Test func upgradeSupersedesTheOldProductImmediately() throws {
        // The App Store re-signs the monthly transaction with isUpgraded and starts the yearly one at once.
        var superseded = entry("1", "pro.monthly", purchased: day(0), expires: day(30), upgraded: true)
        superseded.revision = 2
        let upgrade = entry("2", "pro.yearly", original: "1", purchased: day(10), expires: day(376))

        let (pro, snapshot) = try pro(
            [first, superseded, upgrade],
            [renewal("1", "pro.yearly", signed: day(10))],
            at: day(11)
        )
        #expect(pro.productId == "pro.yearly")
        #expect(pro.transactionId == "2")
        #expect(pro.state == .active)
        #expect(pro.expiresDate == day(376))
        #expect(snapshot.entitlementIds == ["pro", "extras"])
        #expect(snapshot.entitlement(productId: "pro.monthly") == nil)
    }

    @Test func aSupersededTransactionNeverWinsEvenOnAPurchaseDateTie() throws {
        // Upgraded in the same millisecond as a renewal; the renewal's id sorts after the upgrade's.
        let renewal = entry("1000", "pro.monthly", original: "1", purchased: day(30), expires: day(60), upgraded: true)
        let upgrade = entry("999", "pro.yearly", original: "1", purchased: day(30), expires: day(396))

        let (pro, _) = try pro([first, renewal, upgrade], at: day(31))
        #expect(pro.productId == "pro.yearly")
        #expect(pro.transactionId == "999")
    }

    @Test func downgradeWaitsForTheRenewal() throws {
        let yearly = entry("1", "pro.yearly", purchased: day(0), expires: day(366))
        let pending = renewal("1", "pro.yearly", signed: day(100), renewsTo: "pro.monthly")

        let (before, snapshotBefore) = try pro([yearly], [pending], at: day(101))
        #expect(before.productId == "pro.yearly")
        #expect(before.state == .active)
        #expect(before.autoRenewProductId == "pro.monthly")
        #expect(before.expiresDate == day(366))
        #expect(snapshotBefore.entitlementIds == ["pro", "extras"])

        let monthly = entry("2", "pro.monthly", original: "1", purchased: day(366), expires: day(397))
        let renewed = renewal("1", "pro.monthly", signed: day(366))
        let (after, snapshotAfter) = try pro([yearly, monthly], [pending, renewed], at: day(367))
        #expect(after.productId == "pro.monthly")
        #expect(after.transactionId == "2")
        #expect(after.autoRenewProductId == nil)
        #expect(after.expiresDate == day(397))
        #expect(snapshotAfter.entitlementIds == ["pro"])
    }

    @Test func familySharedSubscriptionGivesAccess() throws {
        let shared = entry("7", "pro.monthly", purchased: day(0), expires: day(30), familyShared: true)

        let (pro, snapshot) = try pro([shared], at: day(1))
        #expect(pro.state == .active)
        #expect(pro.isFamilyShared)
        #expect(snapshot.entitlementIds == ["pro"])

        // Family sharing stopped: the App Store revokes the shared transaction.
        var stopped = shared
        stopped.revokedAt = day(2)
        #expect(try self.pro([stopped], at: day(3)).0.state == .revoked)
    }

    @Test func theSubscriptionWithAccessWinsWithinAGroup() throws {
        let ownExpired = entry("1", "pro.monthly", purchased: day(0), expires: day(30))
        let sharedActive = entry("50", "pro.yearly", purchased: day(20), expires: day(385), familyShared: true)

        let (pro, _) = try pro([sharedActive, ownExpired], at: day(40))
        #expect(pro.originalTransactionId == "50")
        #expect(pro.state == .active)
        #expect(pro.isFamilyShared)
    }

    @Test func groupsAreIndependent() throws {
        let news = entry("9", "news", purchased: day(0), expires: day(7))

        let snapshot = engine.evaluate(entries: [news, first], renewalInfos: [], at: day(10))
        #expect(snapshot.entitlements.map(\.productId) == ["news", "pro.monthly"])
        #expect(snapshot.entitlement(subscriptionGroupId: "news")?.state == .expired)
        #expect(snapshot.entitlement(subscriptionGroupId: "pro")?.state == .active)
        #expect(snapshot.entitlementIds == ["pro"])
    }

    @Test func aTransactionWithoutExpiryGrantsNothing() throws {
        let broken = entry("1", "pro.monthly", purchased: day(0))

        let (pro, _) = try pro([broken], at: day(1))
        #expect(pro.state == .expired)
        #expect(!pro.hasAccess)
    }
}

@Suite struct OneTimePurchaseTests {
    let catalog: StaticProductCatalog

    init() throws {
        catalog = try makeCatalog()
    }

    @Test func nonConsumableIsOwnedUntilRevoked() throws {
        let engine = EntitlementEngine(catalog: catalog)
        let bought = entry("1", "lifetime", purchased: day(0), delivery: .pending)

        let owned = engine.evaluate(entries: [bought], renewalInfos: [], at: day(400))
        let lifetime = try #require(owned.entitlement(productId: "lifetime"))
        #expect(lifetime.state == .active)
        #expect(lifetime.hasAccess)
        #expect(lifetime.expiresDate == nil)
        #expect(lifetime.subscriptionGroupId == nil)
        #expect(owned.entitlementIds == ["premium", "themes"])

        var refunded = bought
        refunded.revokedAt = day(3)
        let revoked = engine.evaluate(entries: [refunded], renewalInfos: [], at: day(4))
        #expect(revoked.entitlement(productId: "lifetime")?.state == .revoked)
        #expect(revoked.entitlement(productId: "lifetime")?.hasAccess == false)
        #expect(revoked.entitlementIds.isEmpty)

        // Bought again after the refund: owned again, on the new purchase.
        let again = entry("2", "lifetime", purchased: day(10))
        let rebought = engine.evaluate(entries: [refunded, again], renewalInfos: [], at: day(11))
        #expect(rebought.entitlement(productId: "lifetime")?.state == .active)
        #expect(rebought.entitlement(productId: "lifetime")?.transactionId == "2")
    }

    @Test func familySharedNonConsumableCountsAndOwnPurchaseIsPreferred() throws {
        let engine = EntitlementEngine(catalog: catalog)
        let shared = entry("1", "lifetime", purchased: day(0), familyShared: true)
        let own = entry("2", "lifetime", purchased: day(5))

        let sharedOnly = engine.evaluate(entries: [shared], renewalInfos: [], at: day(1))
        #expect(sharedOnly.entitlement(productId: "lifetime")?.isFamilyShared == true)
        #expect(sharedOnly.entitlement(productId: "lifetime")?.hasAccess == true)

        let both = engine.evaluate(entries: [shared, own], renewalInfos: [], at: day(6))
        #expect(both.entitlement(productId: "lifetime")?.isFamilyShared == false)
        #expect(both.entitlement(productId: "lifetime")?.transactionId == "2")
    }

    @Test func nonRenewingPurchasesStack() throws {
        let engine = EntitlementEngine(catalog: catalog)
        // 2024-01-01 and 2024-01-15: the second starts when the first ends (2024-02-01) and runs to 2024-03-01.
        let january = entry("1", "pass", purchased: day(0))
        let mid = entry("2", "pass", purchased: day(14))
        let february1 = day(31)
        let march1 = day(60)

        let inFirst = engine.evaluate(entries: [mid, january], renewalInfos: [], at: day(20))
        let pass = try #require(inFirst.entitlement(productId: "pass"))
        #expect(pass.state == .active)
        #expect(pass.transactionId == "1")
        #expect(pass.expiresDate == march1)
        #expect(inFirst.entitlementIds == ["season"])

        let inSecond = engine.evaluate(entries: [january, mid], renewalInfos: [], at: day(40))
        #expect(inSecond.entitlement(productId: "pass")?.transactionId == "2")
        #expect(inSecond.entitlement(productId: "pass")?.expiresDate == march1)

        let after = engine.evaluate(entries: [january, mid], renewalInfos: [], at: day(61))
        #expect(after.entitlement(productId: "pass")?.state == .expired)
        #expect(after.entitlement(productId: "pass")?.expiresDate == march1)
        #expect(after.entitlementIds.isEmpty)

        // A purchase after a gap starts at its own purchase date.
        let april = entry("3", "pass", purchased: day(100))
        let gap = engine.evaluate(entries: [january, mid, april], renewalInfos: [], at: day(90))
        #expect(gap.entitlement(productId: "pass")?.state == .expired)
        let resumed = engine.evaluate(entries: [january, mid, april], renewalInfos: [], at: day(101))
        #expect(resumed.entitlement(productId: "pass")?.state == .active)
        #expect(resumed.entitlement(productId: "pass")?.expiresDate == day(130))

        // A refunded purchase grants nothing: only January remains.
        var refunded = mid
        refunded.revokedAt = day(16)
        let withoutSecond = engine.evaluate(entries: [january, refunded], renewalInfos: [], at: day(40))
        #expect(withoutSecond.entitlement(productId: "pass")?.state == .expired)
        #expect(withoutSecond.entitlement(productId: "pass")?.expiresDate == february1)

        var refundedFirst = january
        refundedFirst.revokedAt = day(2)
        let allRefunded = engine.evaluate(entries: [refundedFirst, refunded], renewalInfos: [], at: day(20))
        #expect(allRefunded.entitlement(productId: "pass")?.state == .revoked)
        #expect(allRefunded.entitlement(productId: "pass")?.hasAccess == false)
    }
}

@Suite struct ConsumableBalanceTests {
    let catalog: StaticProductCatalog

    init() throws {
        catalog = try makeCatalog()
    }

    private let purchases = [
        entry("1", "coins", purchased: day(0)),
        entry("2", "coins", purchased: day(1), quantity: 3),
        entry("3", "coins", purchased: day(2), delivery: .pending),
        entry("4", "coins", purchased: day(2), delivery: .retrying),
    ]

    @Test func deliveredPurchasesAddUnitsTimesQuantity() throws {
        let engine = EntitlementEngine(catalog: catalog)

        let snapshot = engine.evaluate(entries: purchases, renewalInfos: [], at: day(3))
        #expect(snapshot.balances == ["coins": ConsumableBalance(balance: 400, debt: 0)])
        #expect(snapshot.entitlements.isEmpty)
        #expect(snapshot.entitlementIds.isEmpty)
    }

    @Test func productWithOnlyUndeliveredPurchasesShowsZero() throws {
        let engine = EntitlementEngine(catalog: catalog)

        let snapshot = engine.evaluate(entries: [purchases[2]], renewalInfos: [], at: day(3))
        #expect(snapshot.balances == ["coins": ConsumableBalance(balance: 0)])
    }

    @Test(arguments: ConsumableRefundPolicy.allCases)
    func refundOfADeliveredPurchaseTakesItsUnitsBack(policy: ConsumableRefundPolicy) throws {
        let engine = EntitlementEngine(catalog: catalog, refundPolicy: policy)
        var refunded = purchases
        refunded[1].transaction.revocationDate = day(5)  // 300 coins, delivered
        refunded[2].revokedAt = day(5)  // never delivered: nothing to take back

        let snapshot = engine.evaluate(entries: refunded, renewalInfos: [], at: day(6))
        #expect(snapshot.balances["coins"] == ConsumableBalance(balance: 100, debt: 0))
    }

    @Test func refundAfterSpendingGoesNegativeUnderAllowNegativeBalance() throws {
        let engine = EntitlementEngine(catalog: catalog, refundPolicy: .allowNegativeBalance)
        var refunded = purchases
        refunded[1].revokedAt = day(5)
        let spent = [ConsumableUsage(productId: "coins", units: 350, date: day(4))]

        let snapshot = engine.evaluate(entries: refunded, renewalInfos: [], usage: spent, at: day(6))
        #expect(snapshot.balances["coins"] == ConsumableBalance(balance: -250, debt: 0))

        // A later purchase fills the hole first.
        let later = entry("5", "coins", purchased: day(7), quantity: 3)
        let refilled = engine.evaluate(entries: refunded + [later], renewalInfos: [], usage: spent, at: day(8))
        #expect(refilled.balances["coins"] == ConsumableBalance(balance: 50, debt: 0))
    }

    @Test func refundAfterSpendingRecordsDebtUnderFloorAtZero() throws {
        let engine = EntitlementEngine(catalog: catalog, refundPolicy: .floorAtZeroRecordingDebt)
        var refunded = purchases
        refunded[1].revokedAt = day(5)
        let spent = [ConsumableUsage(productId: "coins", units: 350, date: day(4))]

        let snapshot = engine.evaluate(entries: refunded, renewalInfos: [], usage: spent, at: day(6))
        #expect(snapshot.balances["coins"] == ConsumableBalance(balance: 0, debt: 250))

        // Later purchases add in full; the debt stays on record.
        let later = entry("5", "coins", purchased: day(7), quantity: 3)
        let refilled = engine.evaluate(entries: refunded + [later], renewalInfos: [], usage: spent, at: day(8))
        #expect(refilled.balances["coins"] == ConsumableBalance(balance: 300, debt: 250))

        // Debt accumulates over several shortfalls.
        let more = [ConsumableUsage(productId: "coins", units: 400, date: day(9))]
        let twice = engine.evaluate(entries: refunded + [later], renewalInfos: [], usage: spent + more, at: day(10))
        #expect(twice.balances["coins"] == ConsumableBalance(balance: 0, debt: 350))
    }

    @Test func refundBeforeSpendingLeavesNoDebt() throws {
        let engine = EntitlementEngine(catalog: catalog, refundPolicy: .floorAtZeroRecordingDebt)
        var refunded = purchases
        refunded[1].revokedAt = day(3)
        let spent = [ConsumableUsage(productId: "coins", units: 100, date: day(4))]

        let snapshot = engine.evaluate(entries: refunded, renewalInfos: [], usage: spent, at: day(6))
        #expect(snapshot.balances["coins"] == ConsumableBalance(balance: 0, debt: 0))
    }
}

@Suite struct EntitlementSnapshotTests {
    @Test func unknownProductsAreSkippedAndListed() throws {
        let engine = EntitlementEngine(catalog: try makeCatalog())
        let entries = [
            entry("1", "com.retired.product", purchased: day(0)),
            entry("2", "lifetime", purchased: day(0)),
            entry("3", "com.retired.product", purchased: day(1)),
            entry("4", "another.unknown", purchased: day(1), expires: day(30)),
        ]
        let usage = [ConsumableUsage(productId: "ghost.coins", units: 5, date: day(1))]

        let snapshot = engine.evaluate(entries: entries, renewalInfos: [], usage: usage, at: day(2))
        #expect(snapshot.unknownProductIds == ["another.unknown", "com.retired.product", "ghost.coins"])
        #expect(snapshot.entitlements.map(\.productId) == ["lifetime"])
        #expect(snapshot.entitlementIds == ["premium", "themes"])
        #expect(snapshot.balances.isEmpty)
    }

    @Test func theSnapshotDoesNotDependOnInputOrderAndEncodesStably() throws {
        let engine = EntitlementEngine(catalog: try makeCatalog())
        let entries = [
            entry("1", "pro.monthly", purchased: day(0), expires: day(30)),
            entry("2", "lifetime", purchased: day(1)),
            entry("3", "pass", purchased: day(2)),
            entry("4", "coins", purchased: day(3)),
            entry("5", "news", purchased: day(4), expires: day(11)),
            entry("6", "pro.monthly", original: "1", purchased: day(30), expires: day(60)),
        ]
        let renewals = [
            renewal("1", "pro.monthly", signed: day(1)),
            renewal("5", "news", signed: day(4), autoRenew: .off),
        ]

        let forward = engine.evaluate(entries: entries, renewalInfos: renewals, at: day(5))
        let backward = engine.evaluate(entries: entries.reversed(), renewalInfos: renewals.reversed(), at: day(5))
        #expect(forward == backward)
        #expect(forward.entitlements.map(\.productId) == ["lifetime", "news", "pass", "pro.monthly"])
        #expect(forward.entitlement(productId: "news")?.state == .willExpire)
        #expect(forward.entitlementIds == ["premium", "themes", "news", "season", "pro"])

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(forward)
        #expect(json == (try encoder.encode(backward)))
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""entitlementIds":["news","premium","pro","season","themes"]"#))
        #expect(text.contains(#""balances":{"coins":{"balance":100,"debt":0}}"#))
        #expect(try JSONDecoder().decode(EntitlementSnapshot.self, from: json) == forward)
    }

    @Test func duplicateTransactionsCountOnceWithTheLatestRevision() throws {
        let engine = EntitlementEngine(catalog: try makeCatalog())
        let bought = entry("1", "coins", purchased: day(0))
        var refunded = bought
        refunded.revokedAt = day(1)
        refunded.revision = 3

        #expect(
            engine.evaluate(entries: [bought, bought], renewalInfos: [], at: day(2)).balances["coins"]?.balance == 100
        )
        #expect(
            engine.evaluate(entries: [refunded, bought], renewalInfos: [], at: day(2)).balances["coins"]?.balance == 0
        )
    }

    @Test func stateGrantsAccessExactlyForActiveWillExpireAndGrace() {
        let granting = EntitlementState.allCases.filter(\.grantsAccess)
        #expect(granting == [.active, .willExpire, .gracePeriod])
    }
}

@Suite struct EntitlementEngineCatalogTests {
    /// A catalog kept elsewhere than in code (a database, a configuration service), answering asynchronously.
    actor RemoteCatalog: ProductCatalog {
        var products: [CatalogProduct]
        private(set) var listings = 0

        init(_ products: [CatalogProduct]) {
            self.products = products
        }

        func product(id: String) throws -> CatalogProduct {
            guard let product = products.first(where: { $0.productId == id }) else {
                throw IAPError(.unknownProduct, "no product '\(id)'")
            }
            return product
        }

        func allProducts() -> [CatalogProduct] {
            listings += 1
            return products
        }

        func add(_ product: CatalogProduct) {
            products.append(product)
        }
    }

    @Test func aProductUnlocksTheSameInCodeInACatalogFileAndInAStoreKitFile() throws {
        let inCode = try StaticProductCatalog(products: [
            CatalogProduct(
                productId: "lifetime",
                kind: .nonConsumable,
                displayName: "Lifetime subscription",
                familyShareable: true
            )
        ])
        let json = #"""
            {"version": 1, "products": [{"productId": "lifetime", "type": "nonConsumable",
              "displayName": "Lifetime subscription", "familyShareable": true}]}
            """#
        let inFile = try StaticProductCatalog(jsonData: Data(json.utf8))
        let storeKit = try StaticProductCatalog(
            jsonData: Data(contentsOf: Fixture.url("revenuecat-UnitTestsConfiguration.v5", fileExtension: "storekit"))
        )

        let products = [inCode, inFile, storeKit].map { $0[productId: "lifetime"] }
        #expect(products.allSatisfy { $0 == products[0] })
        #expect(products[0]?.entitlements == ["lifetime"])
        let bought = [entry("1", "lifetime", purchased: day(0))]
        for catalog in [inCode, inFile, storeKit] {
            let snapshot = EntitlementEngine(catalog: catalog).evaluate(entries: bought, renewalInfos: [], at: day(1))
            #expect(snapshot.entitlementIds == ["lifetime"])
        }
    }

    @Test func anEmptyListUnlocksNothingWhereverTheProductComesFrom() throws {
        let inCode = try StaticProductCatalog(products: [
            CatalogProduct(productId: "tip", kind: .nonConsumable, entitlements: [])
        ])
        let json = #"{"version":1,"products":[{"productId":"tip","type":"nonConsumable","entitlements":[]}]}"#
        let inFile = try StaticProductCatalog(jsonData: Data(json.utf8))
        let bought = [entry("1", "tip", purchased: day(0))]
        for catalog in [inCode, inFile] {
            let snapshot = EntitlementEngine(catalog: catalog).evaluate(entries: bought, renewalInfos: [], at: day(1))
            #expect(snapshot.entitlements.map(\.productId) == ["tip"])
            #expect(snapshot.entitlementIds.isEmpty)
        }
    }

    @Test func anyCatalogGivesTheEngineASnapshotOfWhatItListsNow() async throws {
        let remote = RemoteCatalog([
            CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlements: ["premium"]),
            CatalogProduct(productId: "coins", kind: .consumable, unitsPerPurchase: 100),
        ])
        let engine = try await EntitlementEngine(snapshotOf: remote)
        #expect(await remote.listings == 1)
        let entries = [entry("1", "lifetime", purchased: day(0)), entry("2", "coins", purchased: day(0))]
        let snapshot = engine.evaluate(entries: entries, renewalInfos: [], at: day(1))
        #expect(snapshot.entitlementIds == ["premium"])
        #expect(snapshot.balances["coins"]?.balance == 100)
        #expect(snapshot.unknownProductIds.isEmpty)

        // A product added later is unknown to that engine, and known to the next one.
        await remote.add(CatalogProduct(productId: "themes", kind: .nonConsumable))
        let later = entries + [entry("3", "themes", purchased: day(0))]
        #expect(engine.evaluate(entries: later, renewalInfos: [], at: day(1)).unknownProductIds == ["themes"])
        let next = try await EntitlementEngine(snapshotOf: remote)
        #expect(next.evaluate(entries: later, renewalInfos: [], at: day(1)).entitlementIds == ["premium", "themes"])

        // A static catalog is its own snapshot.
        let fixed = try StaticProductCatalog(products: await remote.products)
        #expect(try await fixed.snapshot() == fixed)
    }

    @Test func aCatalogListingAnInvalidProductGivesNoEngine() async throws {
        let remote = RemoteCatalog([
            CatalogProduct(productId: "lifetime", kind: .nonConsumable),
            CatalogProduct(productId: "lifetime", kind: .consumable),
        ])
        let error = await #expect(throws: IAPError.self) { try await EntitlementEngine(snapshotOf: remote) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("'lifetime'") == true)
    }
}
