#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer
import IAPServerAPI

extension ConsoleRoutes {
    /// Who the support audit names for a console action: the operator, their role, and that it came from the console.
    static func actor(_ session: ConsoleSession) -> String {
        "\(session.operatorName) (\(session.role.rawValue), console)"
    }

    /// The order lookup: its form, and an order's transactions when one is asked for (audited).
    func order(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        let orderId = request.queryValue("id") ?? ""
        var body = "<h1>Order lookup</h1>"
        guard !orderId.isEmpty else {
            return (
                "Order lookup",
                body + "<p class=\"note\">Enter the order ID above: it is on the customer's receipt e-mail.</p>"
            )
        }
        guard let support else {
            return ("Order lookup", body + Self.alert("Order lookup needs the App Store Server API of Production."))
        }
        do {
            let report = try await support.lookUp(orderId: orderId, actor: Self.actor(session))
            body += await render(report, session: session)
        } catch {
            body += Self.alert(Self.explain(error))
        }
        return ("Order \(orderId)", body)
    }

    /// Redelivers an order (support and admin), audited, and shows what came of it.
    func redeliver(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        let fields = ConsoleHTML.form(request.body)
        let orderId = fields["order"] ?? ""
        let userId = fields["customer"].flatMap { $0.isEmpty ? nil : $0 }
        var body = "<h1>Redeliver</h1>"
        if let named = userId, (try? DeliveryPipeline.validate(userId: named)) == nil {
            return ("Redeliver", body + Self.alert("That customer is not a valid user id."))
        }
        guard let support else {
            return ("Redeliver", body + Self.alert("Redelivery needs the App Store Server API of Production."))
        }
        do {
            let report = try await support.redeliver(orderId: orderId, actor: Self.actor(session), userId: userId)
            body += "<p role=\"status\">Order \(ConsoleHTML.escape(orderId)) redelivered where it was owed.</p>"
            body += await render(report, session: session)
        } catch {
            body += Self.alert(Self.explain(error))
        }
        return ("Redeliver", body)
    }

    /// An order's transactions (with the ledger's delivery attempts and last answer), the Redeliver form for the roles
    /// that may use it, and the order's audit trail.
    private func render(_ report: OrderLookupReport, session: ConsoleSession) async -> String {
        guard report.found else {
            return "<p>The App Store knows no order \(ConsoleHTML.escape(report.orderId)).</p>"
        }
        var html = "<h2>Order \(ConsoleHTML.escape(report.orderId))</h2><table><thead><tr>"
        html += ["Transaction", "Product", "Purchased", "State", "Customer", "Delivery"].map {
            "<th scope=\"col\">\($0)</th>"
        }.joined()
        html += "</tr></thead><tbody>"
        for item in report.transactions {
            let purchased = item.purchaseDate.map { String(AnalyticsCalendar.format($0).prefix(16)) } ?? ""
            var delivery =
                item.ledgerState.map { $0.rawValue } ?? (item.delivered ? "delivered" : "not in the ledger")
            if let entry = try? await pipeline.store.entry(transactionId: item.transactionId) {
                if entry.deliveryAttempts > 0 {
                    delivery += ", \(entry.deliveryAttempts) attempt\(entry.deliveryAttempts == 1 ? "" : "s")"
                }
                if let last = entry.lastError, entry.deliveryState != .delivered {
                    delivery += "; last answer: \(last)"
                }
            }
            let customer =
                item.owner.map {
                    "<a href=\"/console/customer?q=\(ConsoleHTML.queryComponent($0))\">\(ConsoleHTML.escape($0))</a>"
                } ?? "nobody yet"
            html += "<tr><td>\(ConsoleHTML.escape(item.transactionId))</td>"
            html += "<td>\(ConsoleHTML.escape(item.productId ?? ""))</td><td>\(purchased)</td>"
            html += "<td>\(item.state.rawValue)</td><td>\(customer)</td>"
            html += "<td>\(ConsoleHTML.escape(delivery))</td></tr>"
        }
        html += "</tbody></table>"
        if !report.rejectedSignatures.isEmpty {
            html += Self.alert("\(report.rejectedSignatures.count) signed transaction(s) from Apple did not verify.")
        }
        guard session.role.mayRedeliver else { return html + (await auditTrail(of: report.orderId)) }
        let unowned = report.transactions.contains { $0.owner == nil }
        html += """
            <form method="post" action="/console/order/redeliver">\
            <input type="hidden" name="csrf" value="\(sessions.csrfToken(for: session))">\
            <input type="hidden" name="order" value="\(ConsoleHTML.escape(report.orderId))">
            """
        if unowned {
            html += """
                <label for="customer">Customer</label><input id="customer" name="customer" maxlength="256">
                """
        }
        html += "<button type=\"submit\">Redeliver</button></form>"
        return html + (await auditTrail(of: report.orderId))
    }

    /// What support did to an order, newest first: every lookup and redelivery the audit holds for it.
    private func auditTrail(of orderId: String) async -> String {
        guard let audit, let entries = try? await audit.entries() else { return "" }
        let trail = entries.filter { $0.orderId == orderId }.reversed()
        var html = "<h2>Audit trail</h2>"
        guard !trail.isEmpty else { return html + "<p>None.</p>" }
        html += "<table><thead><tr>"
        html += ["When", "Who", "Action", "Customer", "Transactions"].map { "<th scope=\"col\">\($0)</th>" }.joined()
        html += "</tr></thead><tbody>"
        for entry in trail.prefix(50) {
            let outcomes = entry.outcomes.map { "\($0.transactionId) \($0.outcome)" }.joined(separator: ", ")
            html += "<tr><td>\(Self.minute(entry.at))</td><td>\(ConsoleHTML.escape(entry.actor))</td>"
            html += "<td>\(ConsoleHTML.escape(entry.action))</td><td>\(ConsoleHTML.escape(entry.userId ?? ""))</td>"
            html += "<td>\(ConsoleHTML.escape(outcomes))</td></tr>"
        }
        return html + "</tbody></table>"
    }

    static func alert(_ message: String) -> String {
        "<p class=\"error\" role=\"alert\">\(ConsoleHTML.escape(message))</p>"
    }

    /// What a failed lookup or redelivery tells the operator: the kind of failure, never another system's detail.
    static func explain(_ error: any Error) -> String {
        let failure = IAPError.wrapping(error, as: .internalError, "the request failed")
        switch failure.code {
        case .invalidArgument, .malformedRequest:
            return "That is not an order ID (or a valid customer)."
        case .ownershipConflict:
            return "The purchase belongs to another customer: nothing was changed."
        case .storageCorrupted:
            return "Support actions are refused: the support audit does not match the ledger (see the overview)."
        case .apiError, .transportFailure, .timeout, .decodingFailure:
            return "The App Store Server API did not answer as expected: try again later."
        default:
            return "The request failed: try again later."
        }
    }
}
