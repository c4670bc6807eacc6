#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPCrypto
import IAPInMemory

extension SimulatedAppStoreEngine {
    /// A gap longer than this between two subscriptions of a group starts a new `recentSubscriptionStartDate`.
    static let recentSubscriptionGap: TimeInterval = 60 * 86_400

    // MARK: - Buying

    /// Buys an auto-renewable subscription: a first purchase or a resubscription of the group, or a change of plan
    /// when the customer is already subscribed in it. An offer applies to the first period of a new subscription
    /// or a resubscription (a win-back offer to a resubscription only); an introductory offer of the product
    /// applies when the customer never subscribed in the group, or as the server's signed eligibility says.
    mutating func subscribe(
        _ product: CatalogProduct,
        account: String,
        appAccountToken: String?,
        offer: SimulatedSubscriptionOffer? = nil,
        introductoryEligibility: Bool? = nil
    ) throws -> SimulatedPurchaseResult {
        guard let groupId = product.subscriptionGroupId else {
            return .failed(IAPError(.invalidConfiguration, "\(product.productId) has no subscription group"))
        }
        let existing = subscriptions.values.first { subscription in
            subscription.account == account && subscription.groupId == groupId && subscription.sharedFrom == nil
        }
        if let offer {
            if existing?.isLive == true, offer.kind == .introductory || offer.kind == .winBack {
                return .failed(
                    IAPError(.offerIneligible, "the customer is subscribed in \(groupId): the offer does not apply")
                )
            }
            if offer.kind == .introductory, existing != nil, introductoryEligibility != true {
                return .failed(
                    IAPError(.offerIneligible, "an introductory offer is for customers new to \(groupId)")
                )
            }
            if offer.kind == .winBack, existing == nil {
                return .failed(
                    IAPError(.offerIneligible, "a win-back offer is for customers whose subscription has ended")
                )
            }
        }
        if let existing, existing.isLive {
            return try changePlan(existing, to: product, appAccountToken: appAccountToken, offer: offer)
        }
        let applied =
            offer
            ?? configuration.subscriptionOffers.first { candidate in
                candidate.kind == .introductory && candidate.productId == product.productId
                    && (introductoryEligibility ?? (existing == nil))
            }

        let start = now
        var payload = basePayload(productId: product.productId, account: account, purchaseDate: start)
        payload.expiresDate = periodEnd(of: product.productId, from: start)
        payload.webOrderLineItemId = makeWebOrderLineItemId()
        payload.appAccountToken = appAccountToken
        if let applied {
            payload.expiresDate = apply(applied, to: &payload, from: start)
        }
        let commitment = commitment(for: product.productId, continuing: nil, start: start)
        if let commitment {
            stamp(commitment, on: &payload, productId: product.productId)
        }
        if let existing {
            payload.originalTransactionId = existing.originalTransactionId
            payload.originalPurchaseDate = existing.originalPurchaseDate
        }
        let record = insert(payload, account: account, orderId: makeOrderId())

        var subscription =
            existing
            ?? SimulatedSubscriptionRecord(
                originalTransactionId: record.id,
                account: account,
                groupId: groupId,
                sharedFrom: nil,
                originalPurchaseDate: start,
                productId: product.productId,
                autoRenewProductId: product.productId,
                expiresDate: start,
                latestTransactionId: record.id,
                recentSubscriptionStartDate: start,
                appAccountToken: appAccountToken
            )
        if existing != nil, start.timeIntervalSince(subscription.expiresDate) > Self.recentSubscriptionGap {
            subscription.recentSubscriptionStartDate = start
        }
        subscription.productId = product.productId
        subscription.autoRenewProductId = product.productId
        subscription.autoRenewEnabled = true
        subscription.phase = .active
        subscription.expiresDate = payload.expiresDate ?? start
        subscription.latestTransactionId = record.id
        subscription.billingRetryStart = nil
        subscription.gracePeriodExpiresDate = nil
        subscription.expirationIntent = nil
        subscription.beforeRevocation = nil
        subscription.appAccountToken = appAccountToken ?? subscription.appAccountToken
        subscription.offer = applied
        subscription.offerRenewalsLeft = applied.map(Self.renewalsAfterFirst) ?? 0
        subscription.pendingOffer = nil
        subscription.commitmentStart = commitment?.start
        subscription.commitmentPeriod = commitment?.period ?? 0
        subscriptions[subscription.originalTransactionId] = subscription

        let subtype: NotificationSubtype = existing == nil ? .initialBuy : .resubscribe
        try notify(.subscribed, subtype, transaction: record, subscription: subscription)
        try mirrorTransaction(of: subscription, type: .subscribed, subtype: subtype)
        return .purchased(try signed(record))
    }

    /// Buying another product of a group the customer is subscribed in: an upgrade takes effect at once; a
    /// downgrade or crossgrade at the next renewal; the current product cancels a pending change or turns
    /// auto-renew back on. With an offer (promotional or offer code), the notification is `OFFER_REDEEMED`
    /// (`UPGRADE`, `DOWNGRADE`, or none for the current product) and the offer applies to the upgrade's
    /// transaction, or from the next renewal.
    private mutating func changePlan(
        _ current: SimulatedSubscriptionRecord,
        to product: CatalogProduct,
        appAccountToken: String?,
        offer: SimulatedSubscriptionOffer?
    ) throws -> SimulatedPurchaseResult {
        var subscription = current
        let currentLevel = products[subscription.productId]?.groupLevel
        if product.productId != subscription.productId, let currentLevel, let newLevel = product.groupLevel,
            newLevel < currentLevel
        {
            return try upgrade(subscription, to: product, appAccountToken: appAccountToken, offer: offer)
        }
        if let offer {
            let subtype: NotificationSubtype? = product.productId == subscription.productId ? nil : .downgrade
            subscription.autoRenewProductId = product.productId
            subscription.autoRenewEnabled = true
            subscription.pendingOffer = offer
            subscriptions[subscription.originalTransactionId] = subscription
            try notify(.offerRedeemed, subtype, subscription: subscription)
            try mirrorState(of: subscription, type: .offerRedeemed, subtype: subtype)
            return .purchased(try signedTransaction(id: subscription.latestTransactionId))
        }
        if product.productId == subscription.productId {
            if subscription.autoRenewProductId != product.productId {
                subscription.autoRenewProductId = product.productId
                subscription.autoRenewEnabled = true
                subscription.pendingOffer = nil
                subscriptions[subscription.originalTransactionId] = subscription
                try notify(.didChangeRenewalPref, subscription: subscription)
                try mirrorState(of: subscription, type: .didChangeRenewalPref, subtype: nil)
            } else if !subscription.autoRenewEnabled {
                try setAutoRenew(originalTransactionId: subscription.originalTransactionId, enabled: true)
            }
            return .purchased(try signedTransaction(id: subscription.latestTransactionId))
        }
        subscription.autoRenewProductId = product.productId
        subscription.autoRenewEnabled = true
        subscription.pendingOffer = nil
        subscriptions[subscription.originalTransactionId] = subscription
        try notify(.didChangeRenewalPref, .downgrade, subscription: subscription)
        try mirrorState(of: subscription, type: .didChangeRenewalPref, subtype: .downgrade)
        return .purchased(try signedTransaction(id: subscription.latestTransactionId))
    }

    /// An upgrade: the current transaction is marked upgraded and a new period of the higher product starts now.
    private mutating func upgrade(
        _ current: SimulatedSubscriptionRecord,
        to product: CatalogProduct,
        appAccountToken: String?,
        offer: SimulatedSubscriptionOffer?
    ) throws -> SimulatedPurchaseResult {
        var subscription = current
        markUpgraded(subscription.latestTransactionId)
        let start = now
        var payload = basePayload(productId: product.productId, account: subscription.account, purchaseDate: start)
        payload.originalTransactionId = subscription.originalTransactionId
        payload.originalPurchaseDate = subscription.originalPurchaseDate
        payload.expiresDate = periodEnd(of: product.productId, from: start)
        payload.webOrderLineItemId = makeWebOrderLineItemId()
        payload.appAccountToken = appAccountToken ?? subscription.appAccountToken
        if let offer {
            payload.expiresDate = apply(offer, to: &payload, from: start)
        }
        let commitment = commitment(for: product.productId, continuing: nil, start: start)
        if let commitment {
            stamp(commitment, on: &payload, productId: product.productId)
        }
        let record = insert(payload, account: subscription.account, orderId: makeOrderId())

        subscription.productId = product.productId
        subscription.autoRenewProductId = product.productId
        subscription.autoRenewEnabled = true
        subscription.phase = .active
        subscription.expiresDate = payload.expiresDate ?? start
        subscription.latestTransactionId = record.id
        subscription.billingRetryStart = nil
        subscription.gracePeriodExpiresDate = nil
        subscription.expirationIntent = nil
        subscription.offer = offer
        subscription.offerRenewalsLeft = offer.map(Self.renewalsAfterFirst) ?? 0
        subscription.pendingOffer = nil
        subscription.commitmentStart = commitment?.start
        subscription.commitmentPeriod = commitment?.period ?? 0
        subscriptions[subscription.originalTransactionId] = subscription
        let type: NotificationType = offer == nil ? .didChangeRenewalPref : .offerRedeemed
        try notify(type, .upgrade, transaction: record, subscription: subscription)
        try mirrorTransaction(of: subscription, type: type, subtype: .upgrade)
        return .purchased(try signed(record))
    }

    /// Gives a transaction starting at `start` the fields and price of an offer.
    ///
    /// - Returns: When the transaction ends: one period of a pay-as-you-go offer, the whole of any other.
    func apply(_ offer: SimulatedSubscriptionOffer, to payload: inout TransactionPayload, from start: Date) -> Date {
        let unit = offerPeriod(of: offer)
        let whole = unit.repeated(offer.periodCount)
        payload.offerType = offer.offerType
        payload.offerIdentifier = offer.kind == .introductory ? nil : offer.id
        payload.offerDiscountType = offer.discountType
        payload.offerPeriod = whole.description
        payload.price = offer.price
        let end = (offer.discountType == .payAsYouGo ? unit : whole).advance(start)
        return end > start ? end : start.addingTimeInterval(86_400)
    }

    /// One period of an offer: its own, else its subscription's.
    func offerPeriod(of offer: SimulatedSubscriptionOffer) -> SubscriptionPeriod {
        offer.period ?? period(of: offer.productId)
    }

    /// How many renewals after an offer's first transaction still come at its price.
    static func renewalsAfterFirst(of offer: SimulatedSubscriptionOffer) -> Int {
        offer.discountType == .payAsYouGo ? offer.periodCount - 1 : 0
    }

    private mutating func markUpgraded(_ transactionId: String) {
        guard transactions[transactionId] != nil else { return }
        transactions[transactionId]?.payload.isUpgraded = true
        touch(transactionId)
    }

    // MARK: - Customer and billing switches

    /// Announces a price increase of a purchaser's live subscription for its next renewals: `PRICE_INCREASE`
    /// `PENDING` when the customer must consent (without consent the subscription expires at the renewal, intent
    /// 3), `ACCEPTED` otherwise.
    mutating func announcePriceIncrease(originalTransactionId: String, price: Int64, needsConsent: Bool) throws {
        var subscription = try purchasedSubscription(originalTransactionId)
        guard subscription.isLive else {
            throw IAPError(.invalidArgument, "subscription \(originalTransactionId) has ended")
        }
        guard price > 0 else {
            throw IAPError(.invalidArgument, "a price increase needs a positive price")
        }
        subscription.increasedPrice = price
        subscription.priceIncreaseStatus =
            needsConsent ? .customerHasNotResponded : .customerConsentedOrWasNotifiedWithoutNeedingConsent
        subscriptions[originalTransactionId] = subscription
        try notify(.priceIncrease, needsConsent ? .pending : .accepted, subscription: subscription)
    }

    /// The customer consents to a pending price increase: `PRICE_INCREASE` `ACCEPTED`.
    mutating func consentToPriceIncrease(originalTransactionId: String) throws {
        var subscription = try purchasedSubscription(originalTransactionId)
        guard subscription.priceIncreaseStatus == .customerHasNotResponded else {
            throw IAPError(
                .invalidArgument,
                "subscription \(originalTransactionId) has no price increase to consent to"
            )
        }
        subscription.priceIncreaseStatus = .customerConsentedOrWasNotifiedWithoutNeedingConsent
        subscriptions[originalTransactionId] = subscription
        try notify(.priceIncrease, .accepted, subscription: subscription)
    }

    /// Turns auto-renew on or off for a purchaser's live subscription.
    mutating func setAutoRenew(originalTransactionId: String, enabled: Bool) throws {
        var subscription = try purchasedSubscription(originalTransactionId)
        guard subscription.isLive else {
            throw IAPError(
                .invalidArgument,
                "subscription \(originalTransactionId) has ended; buy it again to resubscribe"
            )
        }
        guard subscription.autoRenewEnabled != enabled else { return }
        subscription.autoRenewEnabled = enabled
        subscriptions[originalTransactionId] = subscription
        let subtype: NotificationSubtype = enabled ? .autoRenewEnabled : .autoRenewDisabled
        try notify(.didChangeRenewalStatus, subtype, subscription: subscription)
        try mirrorState(of: subscription, type: .didChangeRenewalStatus, subtype: subtype)
    }

    /// Makes charging the customer fail or succeed; fixing billing while the subscription is in its grace period or
    /// billing retry recovers it at once.
    mutating func setBillingFailure(originalTransactionId: String, failing: Bool) throws {
        var subscription = try purchasedSubscription(originalTransactionId)
        subscription.billingFailing = failing
        subscriptions[originalTransactionId] = subscription
        for var member in familyMirrors(of: subscription) {
            member.billingFailing = failing
            subscriptions[member.originalTransactionId] = member
        }
        if !failing, subscription.phase == .gracePeriod || subscription.phase == .billingRetry {
            // In the grace period no paid day is lost: the new period starts where the old one ended. Later, the
            // subscription restarts on the day of recovery.
            let periodStart = subscription.phase == .gracePeriod ? subscription.expiresDate : now
            try renew(subscription, purchaseDate: now, periodStart: periodStart, subtype: .billingRecovery)
        }
    }

    private func purchasedSubscription(_ originalTransactionId: String) throws -> SimulatedSubscriptionRecord {
        let subscription = try subscription(originalTransactionId)
        guard subscription.sharedFrom == nil else {
            throw IAPError(
                .invalidArgument,
                "subscription \(originalTransactionId) is family-shared; change the purchaser's subscription instead"
            )
        }
        return subscription
    }

    // MARK: - Time

    /// The next scheduled event of a purchaser's subscription: its renewal or expiry, the end of its grace period,
    /// or the end of billing retry.
    func dueDate(of subscription: SimulatedSubscriptionRecord) -> Date? {
        guard subscription.sharedFrom == nil else { return nil }
        switch subscription.phase {
        case .active:
            return subscription.expiresDate
        case .gracePeriod:
            return subscription.gracePeriodExpiresDate ?? subscription.expiresDate
        case .billingRetry:
            let start = subscription.billingRetryStart ?? subscription.expiresDate
            return start.addingTimeInterval(Double(configuration.billingRetryDays) * 86_400)
        case .expired, .revoked:
            return nil
        }
    }

    /// The earliest scheduled event of any subscription; ties go to the lower original transaction id.
    func nextDueEvent() -> (date: Date, originalTransactionId: String)? {
        var next: (date: Date, originalTransactionId: String)?
        for subscription in subscriptions.values {
            guard let date = dueDate(of: subscription) else { continue }
            if let current = next {
                let earlier =
                    date < current.date
                    || (date == current.date
                        && Self.numericOrder(subscription.originalTransactionId, current.originalTransactionId))
                if !earlier { continue }
            }
            next = (date, subscription.originalTransactionId)
        }
        return next
    }

    /// Runs every scheduled event due at or before `limit`, oldest first.
    ///
    /// - Parameters:
    ///   - limit: The last instant to process.
    ///   - manualClock: When given, set to each event's instant before it runs, so that everything signed for the
    ///     event carries the instant it happened.
    mutating func processDueEvents(until limit: Date, manualClock: ManualClock?) throws {
        var steps = 0
        while let event = nextDueEvent(), event.date <= limit {
            steps += 1
            guard steps <= 1_000_000 else {
                throw IAPError(.internalError, "more than a million subscription events are due; advance in steps")
            }
            if let manualClock, manualClock.now < event.date {
                manualClock.set(event.date)
            }
            try processEvent(of: event.originalTransactionId, dueAt: event.date)
        }
    }

    private mutating func processEvent(of originalTransactionId: String, dueAt due: Date) throws {
        guard var subscription = subscriptions[originalTransactionId] else { return }
        switch subscription.phase {
        case .active where !subscription.autoRenewEnabled && !owesRenewals(subscription):
            subscription.phase = .expired
            subscription.expirationIntent = .customerCancelled
            subscriptions[originalTransactionId] = subscription
            try notify(.expired, .voluntary, subscription: subscription)
            try mirrorState(of: subscription, type: .expired, subtype: .voluntary)
        case .active where subscription.priceIncreaseStatus == .customerHasNotResponded:
            subscription.phase = .expired
            subscription.autoRenewEnabled = false
            subscription.expirationIntent = .customerDidNotConsentToPriceIncrease
            subscriptions[originalTransactionId] = subscription
            try notify(.expired, .priceIncrease, subscription: subscription)
            try mirrorState(of: subscription, type: .expired, subtype: .priceIncrease)
        case .active where subscription.billingFailing:
            subscription.billingRetryStart = subscription.expiresDate
            let subtype: NotificationSubtype?
            if let graceDays = configuration.gracePeriodDays {
                subscription.phase = .gracePeriod
                subscription.gracePeriodExpiresDate = subscription.expiresDate.addingTimeInterval(
                    Double(graceDays) * 86_400
                )
                subtype = .gracePeriod
            } else {
                subscription.phase = .billingRetry
                subtype = nil
            }
            subscriptions[originalTransactionId] = subscription
            try notify(.didFailToRenew, subtype, subscription: subscription)
            try mirrorState(of: subscription, type: .didFailToRenew, subtype: subtype)
        case .active:
            try renew(subscription, purchaseDate: due, periodStart: due, subtype: nil)
        case .gracePeriod:
            subscription.phase = .billingRetry
            subscriptions[originalTransactionId] = subscription
            try notify(.gracePeriodExpired, subscription: subscription)
            try mirrorState(of: subscription, type: .gracePeriodExpired, subtype: nil)
        case .billingRetry:
            subscription.phase = .expired
            subscription.expirationIntent = .billingError
            subscriptions[originalTransactionId] = subscription
            try notify(.expired, .billingRetry, subscription: subscription)
            try mirrorState(of: subscription, type: .expired, subtype: .billingRetry)
        case .expired, .revoked:
            break
        }
    }

    /// Renews a subscription to its auto-renew product: a new transaction with reason RENEWAL and `DID_RENEW`.
    private mutating func renew(
        _ current: SimulatedSubscriptionRecord,
        purchaseDate: Date,
        periodStart: Date,
        subtype: NotificationSubtype?
    ) throws {
        var subscription = current
        let productId = subscription.autoRenewProductId
        var expiresDate = periodEnd(of: productId, from: periodStart)
        if expiresDate <= purchaseDate {
            expiresDate = periodEnd(of: productId, from: purchaseDate)
        }
        var payload = basePayload(productId: productId, account: subscription.account, purchaseDate: purchaseDate)
        payload.originalTransactionId = subscription.originalTransactionId
        payload.originalPurchaseDate = subscription.originalPurchaseDate
        payload.expiresDate = expiresDate
        payload.webOrderLineItemId = makeWebOrderLineItemId()
        payload.appAccountToken = subscription.appAccountToken
        payload.transactionReason = .renewal
        if let increased = subscription.increasedPrice, productId == subscription.productId {
            payload.price = increased
            subscription.priceIncreaseStatus = nil
        }
        if let pending = subscription.pendingOffer, pending.productId == productId {
            payload.expiresDate = apply(pending, to: &payload, from: purchaseDate)
            subscription.offer = pending
            subscription.offerRenewalsLeft = Self.renewalsAfterFirst(of: pending)
        } else if let offer = subscription.offer, offer.productId == productId, subscription.offerRenewalsLeft > 0 {
            payload.expiresDate = apply(offer, to: &payload, from: purchaseDate)
            subscription.offerRenewalsLeft -= 1
        } else {
            subscription.offer = nil
            subscription.offerRenewalsLeft = 0
        }
        subscription.pendingOffer = nil
        let commitment = commitment(for: productId, continuing: subscription, start: purchaseDate)
        if let commitment {
            stamp(commitment, on: &payload, productId: productId)
        }
        subscription.commitmentStart = commitment?.start
        subscription.commitmentPeriod = commitment?.period ?? 0
        let record = insert(payload, account: subscription.account, orderId: makeOrderId())

        subscription.productId = productId
        subscription.phase = .active
        subscription.expiresDate = payload.expiresDate ?? expiresDate
        subscription.latestTransactionId = record.id
        subscription.billingRetryStart = nil
        subscription.gracePeriodExpiresDate = nil
        subscription.expirationIntent = nil
        subscriptions[subscription.originalTransactionId] = subscription
        try notify(.didRenew, subtype, transaction: record, subscription: subscription)
        try mirrorTransaction(of: subscription, type: .didRenew, subtype: subtype)
    }

    // MARK: - Family mirrors

    /// The live family-shared mirrors of a purchaser's subscription.
    func familyMirrors(of owner: SimulatedSubscriptionRecord) -> [SimulatedSubscriptionRecord] {
        let members = Set(familyMembers(of: owner.account))
        return subscriptions.values
            .filter { $0.sharedFrom == owner.originalTransactionId && members.contains($0.account) }
            .sorted { Self.numericOrder($0.originalTransactionId, $1.originalTransactionId) }
    }

    /// Gives every family member a copy of the purchaser's newest transaction, with the same notification.
    mutating func mirrorTransaction(
        of owner: SimulatedSubscriptionRecord,
        type: NotificationType,
        subtype: NotificationSubtype?
    ) throws {
        guard isFamilyShareable(owner.productId) || isFamilyShareable(owner.autoRenewProductId) else { return }
        for member in familyMembers(of: owner.account) {
            try shareSubscription(owner, with: member, type: type, subtype: subtype)
        }
    }

    /// Gives one family member a copy of the purchaser's newest transaction, creating the member's mirror of the
    /// subscription (with `SUBSCRIBED` `INITIAL_BUY`) when there is none yet.
    mutating func shareSubscription(
        _ owner: SimulatedSubscriptionRecord,
        with member: String,
        type: NotificationType,
        subtype: NotificationSubtype?
    ) throws {
        guard let source = transactions[owner.latestTransactionId] else { return }
        let existing = subscriptions.values.first {
            $0.sharedFrom == owner.originalTransactionId && $0.account == member
        }
        if let existing, subtype == .upgrade {
            markUpgraded(existing.latestTransactionId)
        }
        var payload = basePayload(
            productId: source.payload.productId ?? owner.productId,
            account: member,
            purchaseDate: source.payload.purchaseDate ?? now
        )
        payload.inAppOwnershipType = .familyShared
        payload.expiresDate = source.payload.expiresDate
        payload.transactionReason = source.payload.transactionReason
        payload.webOrderLineItemId = makeWebOrderLineItemId()
        if let existing {
            payload.originalTransactionId = existing.originalTransactionId
            payload.originalPurchaseDate = existing.originalPurchaseDate
        }
        let record = insert(payload, account: member, orderId: nil, sharedFrom: source.id)
        var mirror =
            existing
            ?? SimulatedSubscriptionRecord(
                originalTransactionId: record.id,
                account: member,
                groupId: owner.groupId,
                sharedFrom: owner.originalTransactionId,
                originalPurchaseDate: record.payload.purchaseDate ?? now,
                productId: owner.productId,
                autoRenewProductId: owner.autoRenewProductId,
                expiresDate: owner.expiresDate,
                latestTransactionId: record.id,
                recentSubscriptionStartDate: record.payload.purchaseDate ?? now
            )
        mirror.mirror(owner)
        mirror.latestTransactionId = record.id
        mirror.beforeRevocation = nil
        subscriptions[mirror.originalTransactionId] = mirror
        if existing == nil {
            try notify(.subscribed, .initialBuy, transaction: record, subscription: mirror)
        } else {
            try notify(type, subtype, transaction: record, subscription: mirror)
        }
    }

    /// Copies a purchaser's new state onto the family mirrors and sends each the same notification.
    mutating func mirrorState(
        of owner: SimulatedSubscriptionRecord,
        type: NotificationType,
        subtype: NotificationSubtype?
    ) throws {
        for var member in familyMirrors(of: owner) where member.phase != .revoked {
            member.mirror(owner)
            subscriptions[member.originalTransactionId] = member
            try notify(type, subtype, subscription: member)
        }
    }

    // MARK: - Renewal-date extensions

    /// Extend a Subscription Renewal Date: the purchaser's active subscription (and its family members') ends `days`
    /// later, its current transaction's `expiresDate` with it, and a `RENEWAL_EXTENDED` notification goes out. At most
    /// two extensions in 365 days; a request identifier asked again answers as it did, extending nothing more.
    mutating func extendRenewalDate(
        originalTransactionId id: String,
        days: Int,
        requestIdentifier: String
    ) throws -> SimulatedRenewalExtension {
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw Self.invalidTransactionId(id)
        }
        guard var subscription = subscriptions[id], subscription.sharedFrom == nil else {
            throw Self.apiError(status: 404, code: 4_040_005, "Original transaction id not found: \(id)")
        }
        let earlier = renewalExtensions[id] ?? []
        if let done = earlier.first(where: { $0.requestIdentifier == requestIdentifier }) {
            return done
        }
        guard subscription.phase == .active else {
            throw Self.apiError(
                status: 403,
                code: 4_030_004,
                "Subscription \(id) does not qualify for a renewal-date extension in its state."
            )
        }
        guard earlier.filter({ now.timeIntervalSince($0.at) < 365 * 86_400 }).count < 2 else {
            throw Self.apiError(
                status: 403,
                code: 4_030_005,
                "Subscription \(id) already received the most renewal-date extensions."
            )
        }
        subscription.expiresDate = subscription.expiresDate.addingTimeInterval(Double(days) * 86_400)
        subscriptions[id] = subscription
        let extended = SimulatedRenewalExtension(
            requestIdentifier: requestIdentifier,
            at: now,
            effectiveDate: subscription.expiresDate,
            webOrderLineItemId: transactions[subscription.latestTransactionId]?.payload.webOrderLineItemId
        )
        renewalExtensions[id] = earlier + [extended]
        for record in [subscription] + familyMirrors(of: subscription) where record.phase != .revoked {
            transactions[record.latestTransactionId]?.payload.expiresDate = subscription.expiresDate
            touch(record.latestTransactionId)
        }
        try notify(.renewalExtended, nil, subscription: subscription)
        try mirrorState(of: subscription, type: .renewalExtended, subtype: nil)
        return extended
    }
}

extension SimulatedAppStoreEngine {
    /// Extend Subscription Renewal Dates for All Active Subscribers: every purchaser's active subscription to the
    /// product (in the storefronts given, all when none) extended as ``extendRenewalDate(originalTransactionId:days:requestIdentifier:)``
    /// extends one (each its `RENEWAL_EXTENDED`; one that had its two extensions of the year is counted failed), then a
    /// `RENEWAL_EXTENSION` `SUMMARY` notification with the counts. The simulated App Store completes it at once; the
    /// same request identifier for the product again changes nothing.
    mutating func extendRenewalDatesForAllActiveSubscribers(
        productId: String,
        days: Int,
        requestIdentifier: String,
        storefronts: [String]
    ) throws {
        guard products[productId]?.kind == .autoRenewable else {
            throw Self.apiError(status: 400, code: 4_000_023, "Invalid product id: \(productId)")
        }
        let key = productId + "/" + requestIdentifier
        guard massExtensions[key] == nil else { return }
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        for id in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[id], subscription.sharedFrom == nil,
                subscription.productId == productId, subscription.phase == .active
            else { continue }
            if !storefronts.isEmpty {
                let storefront = transactions[subscription.latestTransactionId]?.payload.storefront ?? ""
                guard storefronts.contains(storefront) else { continue }
            }
            do {
                _ = try extendRenewalDate(originalTransactionId: id, days: days, requestIdentifier: requestIdentifier)
                succeeded += 1
            } catch {
                failed += 1
            }
        }
        massExtensions[key] = SimulatedMassExtension(
            requestIdentifier: requestIdentifier,
            completeDate: now,
            succeededCount: succeeded,
            failedCount: failed
        )
        let payload = NotificationPayload(
            notificationType: .renewalExtension,
            subtype: .summary,
            notificationUUID: UUID().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            summary: NotificationSummary(
                environment: configuration.environment,
                appAppleId: configuration.environment == .production ? configuration.appAppleId : nil,
                bundleId: configuration.bundleId,
                productId: productId,
                requestIdentifier: requestIdentifier,
                storefrontCountryCodes: storefronts.isEmpty ? nil : storefronts,
                succeededCount: succeeded,
                failedCount: failed
            )
        )
        let signedPayload = try signer.sign(payload)
        outbox.append(signedPayload)
        notificationHistory.append(signedPayload)
    }
}

/// A renewal-date extension for all active subscribers of a product, complete at once.
struct SimulatedMassExtension: Sendable, Hashable {
    let requestIdentifier: String
    let completeDate: Date
    let succeededCount: Int64
    let failedCount: Int64
}

/// One renewal-date extension a subscription received.
struct SimulatedRenewalExtension: Sendable, Hashable {
    /// The caller's identifier of the request.
    let requestIdentifier: String
    /// When it was asked.
    let at: Date
    /// The subscription's new end.
    let effectiveDate: Date
    /// The current transaction's web order line item id.
    let webOrderLineItemId: String?
}
