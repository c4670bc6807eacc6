#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer
import IAPServerAPI

extension ConsoleRoutes {
    /// How many ledger entries one page of a customer's timeline shows.
    static let timelinePageSize = 25

    /// Who a search names: a user id, or the owner of a transaction, a purchase family or an Apple Account's app
    /// transaction id.
    struct CustomerMatch {
        /// The customers found (more than one only for an app transaction id several customers used).
        var userIds: [String]
        /// What the search text was taken as.
        var matchedAs: String
    }

    /// Finds whose purchases a search names: a user id with entries, else a transaction id, an original transaction
    /// id, an app transaction id (``EntitlementStore/entries(appTransactionId:)``).
    func findCustomer(_ query: String) async throws -> CustomerMatch? {
        let store = pipeline.store
        if !query.hasPrefix(DeliveryPipeline.unownedPrefix),
            try await !store.history(userId: query, cursor: nil, limit: 1).entries.isEmpty
        {
            return CustomerMatch(userIds: [query], matchedAs: "user id")
        }
        if let entry = try await store.entry(transactionId: query) {
            return CustomerMatch(userIds: [entry.userId], matchedAs: "transaction id")
        }
        if let entry = try await store.entries(originalTransactionId: query).last {
            return CustomerMatch(userIds: [entry.userId], matchedAs: "original transaction id")
        }
        let account: [LedgerEntry]
        do {
            account = try await store.entries(appTransactionId: query)
        } catch let error as IAPError where error.code == .unsupportedOperation {
            // A store without the index: read whole, as long as it can be.
            guard let ledger else { return nil }
            account = try await ledger.allEntries().filter { $0.transaction.appTransactionId == query }
        }
        var users: [String] = []
        for entry in account where !users.contains(where: { $0.isSameUser(as: entry.userId) }) {
            users.append(entry.userId)
        }
        return users.isEmpty ? nil : CustomerMatch(userIds: users, matchedAs: "app transaction id")
    }

    /// The customer page: what a search names, the entitlements now and the timeline, paged; every customer shown
    /// goes to the support audit first (action `customer.lookup`, the transactions of the page as `shown`).
    func customer(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        let query = request.queryValue("q") ?? ""
        var body = "<h1>Customer</h1>"
        guard !query.isEmpty else {
            return (
                "Customer",
                body + "<p class=\"note\">Search above by user id, transaction id, original transaction id or "
                    + "app transaction id.</p>"
            )
        }
        guard let audit else {
            return ("Customer", body + Self.alert("Customer pages need the support audit, which is not configured."))
        }
        let match: CustomerMatch?
        do {
            match = try await findCustomer(query)
        } catch {
            return ("Customer", body + Self.alert("The ledger cannot be read now."))
        }
        guard let match else {
            return (
                "Customer",
                body + "<p>No customer, transaction, original transaction or app transaction "
                    + "\(ConsoleHTML.escape(query)) is in the ledger.</p>"
            )
        }
        guard match.userIds.count == 1, let userId = match.userIds.first else {
            body +=
                "<p>The app transaction id \(ConsoleHTML.escape(query)) is in the purchases of several customers:</p>"
            body += "<ul>"
            for userId in match.userIds {
                body += "<li><a href=\"/console/customer?q=\(ConsoleHTML.queryComponent(userId))\">"
                body += "\(ConsoleHTML.escape(userId))</a></li>"
            }
            return ("Customer", body + "</ul>")
        }
        let cursor = request.queryValue("cursor").flatMap { $0.isEmpty ? nil : $0 }
        do {
            let page = try await pipeline.store.history(
                userId: userId,
                cursor: cursor,
                limit: Self.timelinePageSize
            )
            // On a server of several apps, the entitlements of each app, each by its own catalog.
            let apps = servedApps
            var listings: [(app: String?, listing: EntitlementListing)] = []
            for app in apps.isEmpty ? [String?.none] : apps.map(Optional.some) {
                let listing = try await EntitlementListing.read(
                    userId: userId,
                    from: pipeline.store,
                    catalog: pipeline.catalog,
                    unknownProducts: pipeline.unknownProducts,
                    proratedRefunds: pipeline.proratedRefunds,
                    at: pipeline.clock.now,
                    bundleId: app
                )
                listings.append((app, listing))
            }
            var renewals: [String: RenewalInfoPayload] = [:]
            for row in listings.flatMap(\.listing.rows) where row.kind == .autoRenewable {
                renewals[row.originalTransactionId] = try await pipeline.store.renewalInfo(
                    originalTransactionId: row.originalTransactionId
                )
            }
            guard await recordCustomerRead(userId: userId, shown: page.entries, session: session, in: audit) else {
                return (
                    "Customer",
                    body + Self.alert("The support audit cannot be written now, so the customer is not shown.")
                )
            }
            let owner =
                userId.hasPrefix(DeliveryPipeline.unownedPrefix)
                ? "nobody yet: the purchase waits for its owner (redeliver its order to name one)" : userId
            body += "<p>Found by \(match.matchedAs) <strong>\(ConsoleHTML.escape(query))</strong>: customer "
            body += "<strong>\(ConsoleHTML.escape(owner))</strong>.</p>"
            for (app, listing) in listings {
                body += Self.entitlements(listing, renewals: renewals, app: app)
            }
            body += Self.timeline(page.entries)
            if let next = page.nextCursor {
                body += "<p><a href=\"/console/customer?q=\(ConsoleHTML.queryComponent(query))&amp;cursor="
                body += "\(ConsoleHTML.queryComponent(next))\">Older</a></p>"
            }
            body += customerNotifications(userId)
            return ("Customer \(userId)", body)
        } catch let error as IAPError where error.code == .invalidArgument {
            return ("Customer", body + Self.alert("That page of the timeline does not exist."))
        } catch {
            return ("Customer", body + Self.alert(Self.explain(error)))
        }
    }

    /// Writes the audit entry of a customer read; `false` when it cannot be written (the page is not shown then).
    private func recordCustomerRead(
        userId: String,
        shown: [LedgerEntry],
        session: ConsoleSession,
        in audit: any SupportAuditLog
    ) async -> Bool {
        do {
            try await audit.checkWritable()
            let entry = SupportAuditEntry(
                at: pipeline.clock.now,
                actor: Self.actor(session),
                action: "customer.lookup",
                orderId: "",
                userId: userId,
                outcomes: shown.map {
                    .init(transactionId: $0.transactionId, outcome: "shown", productId: $0.productId)
                }
            )
            try await audit.append(entry)
            return true
        } catch {
            record("console.customer", session.operatorName, outcome: "auditRefused")
            return false
        }
    }

    /// The entitlements now: one row per product, and the consumable balances.
    static func entitlements(
        _ listing: EntitlementListing,
        renewals: [String: RenewalInfoPayload],
        app: String? = nil
    ) -> String {
        var html = "<h2>Entitlements now\(app.map { " in " + ConsoleHTML.escape($0) } ?? "")</h2>"
        guard !listing.rows.isEmpty else {
            return html + "<p>No entitlement.</p>"
        }
        html += "<table><thead><tr>"
        html += ["Product", "Kind", "State", "Access", "Until", "Renews", "Grace until"].map {
            "<th scope=\"col\">\($0)</th>"
        }.joined()
        html += "</tr></thead><tbody>"
        for row in listing.rows {
            let renewal = renewals[row.originalTransactionId]
            let renews: String
            switch renewal?.autoRenewStatus {
            case .some(.on): renews = "yes" + (renewal?.isInBillingRetryPeriod == true ? " (billing retry)" : "")
            case .some(.off): renews = "no"
            default: renews = ""
            }
            var commitment = ""
            if let end = row.commitmentExpiresDate {
                let owed = row.commitmentRenewalsOwed.map { ", \($0) renewal\($0 == 1 ? "" : "s") owed" } ?? ""
                commitment = "<br><span class=\"note\">commitment until \(Self.minute(end))\(owed)</span>"
            }
            html += "<tr><th scope=\"row\">\(ConsoleHTML.escape(row.productId))</th>"
            html +=
                "<td>\(row.kind.rawValue)</td><td>\(row.state.rawValue)</td><td>\(row.hasAccess ? "yes" : "no")</td>"
            html += "<td>\(Self.minute(row.expiresDate))\(commitment)</td><td>\(renews)</td>"
            html += "<td>\(Self.minute(renewal?.gracePeriodExpiresDate))</td></tr>"
        }
        html += "</tbody></table>"
        if !listing.balances.isEmpty {
            html += "<h3>Consumable balances</h3><table><tbody>"
            for (productId, balance) in listing.balances.sorted(by: { $0.key < $1.key }) {
                html += "<tr><th scope=\"row\">\(ConsoleHTML.escape(productId))</th>"
                html += "<td class=\"number\">\(balance)</td></tr>"
            }
            html += "</tbody></table>"
        }
        return html
    }

    /// The timeline of one page of a customer's ledger entries, newest first: each purchase or renewal with its
    /// delivery (state, attempts, the last answer of the fulfillment), and each refund or revocation.
    static func timeline(_ entries: [LedgerEntry]) -> String {
        var html = "<h2>Timeline</h2>"
        guard !entries.isEmpty else {
            return html + "<p>No purchase.</p>"
        }
        html += "<table><thead><tr>"
        html += ["When", "What", "Product", "Transaction", "Order", "Price", "Environment", "Delivery"].map {
            "<th scope=\"col\">\($0)</th>"
        }.joined()
        html += "</tr></thead><tbody>"
        for entry in entries {
            let transaction = entry.transaction
            let environment = ConsoleHTML.escape(entry.environment?.rawValue ?? "")
            let product = ConsoleHTML.escape(entry.productId)
            let transactionId = ConsoleHTML.escape(entry.transactionId)
            if let rescinded = entry.consentRescindedAt, transaction.revocationDate == nil {
                html += "<tr><td>\(Self.minute(rescinded))</td><td>Withdrawn (consent rescinded)</td>"
                html += "<td>\(product)</td><td>\(transactionId)</td><td></td><td></td><td>\(environment)</td>"
                html += "<td>\(entry.revocationDelivered ? "taken back" : "to take back")</td></tr>"
            } else if let revoked = entry.revokedAt ?? transaction.revocationDate {
                var what = transaction.revocationType == .familyRevoke ? "Revoked (Family Sharing)" : "Refunded"
                if let percentage = transaction.revocationPercentage, transaction.revocationType == .refundProrated {
                    what = "Refunded \(percentage / 1_000).\(percentage % 1_000 / 100) %"
                }
                html += "<tr><td>\(Self.minute(transaction.revocationDate ?? revoked))</td><td>\(what)</td>"
                html += "<td>\(product)</td><td>\(transactionId)</td><td></td><td></td><td>\(environment)</td>"
                html += "<td>\(entry.revocationDelivered ? "taken back" : "to take back")</td></tr>"
            }
            let what =
                entry.transactionId == entry.originalTransactionId
                ? "Purchase" : (transaction.type == .autoRenewableSubscription ? "Renewal" : "Purchase")
            var price = ""
            if let amount = transaction.price, let currency = transaction.currency {
                price = "\(AnalyticsReport.decimal(amount)) \(ConsoleHTML.escape(currency))"
            }
            var delivery = entry.deliveryState.rawValue
            if entry.deliveryAttempts > 0 {
                delivery += ", \(entry.deliveryAttempts) attempt\(entry.deliveryAttempts == 1 ? "" : "s")"
            }
            if let delivered = entry.deliveredAt {
                delivery += ", at \(Self.minute(delivered))"
            }
            if let next = entry.nextAttemptAt, entry.deliveryState == .retrying {
                delivery += ", next \(Self.minute(next))"
            }
            if let last = entry.lastError, entry.deliveryState != .delivered {
                delivery += "; last answer: \(last)"
            }
            if entry.grantGeneration > 0 {
                // Each reversal of a refund grants the purchase again, under a new idempotency key.
                let times = entry.grantGeneration == 1 ? "once" : "\(entry.grantGeneration) times"
                delivery += "; refund reversed \(times)"
            }
            html += "<tr><td>\(Self.minute(transaction.purchaseDate ?? entry.recordedAt))</td><td>\(what)</td>"
            html += "<td>\(product)</td><td>\(transactionId)</td>"
            html += "<td>\(ConsoleHTML.escape(entry.orderId ?? ""))</td><td>\(price)</td><td>\(environment)</td>"
            html += "<td>\(ConsoleHTML.escape(delivery))</td></tr>"
        }
        return html + "</tbody></table>"
    }

    /// A date to the minute, UTC (`2026-06-01T10:15`), or nothing.
    static func minute(_ date: Date?) -> String {
        date.map { String(AnalyticsCalendar.format($0).prefix(16)) } ?? ""
    }

    /// The App Store's notifications about a customer's purchases that this instance processed lately.
    private func customerNotifications(_ userId: String) -> String {
        guard let activity else { return "" }
        let theirs = activity.notifications.filter { $0.userId.map { $0.isSameUser(as: userId) } ?? false }
        var html = "<h2>Notifications</h2><p class=\"note\">Those this instance processed since it started.</p>"
        guard !theirs.isEmpty else { return html + "<p>None.</p>" }
        html += "<table><thead><tr>"
        html += ["When", "Type", "Subtype", "Outcome", "Delivery", "Transaction"].map { "<th scope=\"col\">\($0)</th>" }
            .joined()
        html += "</tr></thead><tbody>"
        for notification in theirs.prefix(20) {
            html += "<tr><td>\(String(AnalyticsCalendar.format(notification.time).prefix(19)))</td>"
            html += "<td>\(ConsoleHTML.escape(notification.type ?? ""))</td>"
            html += "<td>\(ConsoleHTML.escape(notification.subtype ?? ""))</td>"
            html += "<td>\(ConsoleHTML.escape(notification.outcome))</td>"
            html += "<td>\(ConsoleHTML.escape(notification.delivery ?? ""))</td>"
            html += "<td>\(ConsoleHTML.escape(notification.transactionId ?? ""))</td></tr>"
        }
        return html + "</tbody></table>"
    }
}
