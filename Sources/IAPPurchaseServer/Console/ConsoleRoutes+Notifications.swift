#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer

extension ConsoleRoutes {
    /// The most notifications the page shows.
    static let notificationRows = 200

    /// The App Store's notifications this instance processed lately, newest first, filtered by type, environment
    /// and outcome.
    func notifications(_ session: ConsoleSession, _ request: HTTPServerRequest) -> (title: String, body: String) {
        let type = (request.queryValue("type") ?? "").uppercased()
        let environment = request.queryValue("environment") ?? ""
        let outcome = request.queryValue("outcome") ?? ""
        func options(_ values: [String], selected: String) -> String {
            (["any"] + values).map { value in
                let chosen = value == selected || (value == "any" && selected.isEmpty) ? " selected" : ""
                return "<option value=\"\(value == "any" ? "" : value)\"\(chosen)>\(value)</option>"
            }.joined()
        }
        var body = "<h1>Notifications</h1>"
        body += """
            <form method="get" action="/console/notifications">
            <label for="type">Type</label><input id="type" name="type" maxlength="64" value="\(ConsoleHTML.escape(type))">
            <label for="environment">Environment</label><select id="environment" name="environment">\
            \(options(["Production", "Sandbox", "Xcode", "LocalTesting"], selected: environment))</select>
            <label for="outcome">Outcome</label><select id="outcome" name="outcome">\
            \(options(["processed", "duplicate", "unowned", "rejected", "failed"], selected: outcome))</select>
            <button type="submit">Filter</button></form>
            """
        guard let activity else {
            return ("Notifications", body + Self.alert("This server keeps no record of its notifications."))
        }
        let matching = activity.notifications.filter {
            (type.isEmpty || $0.type == type) && (environment.isEmpty || $0.environment == environment)
                && (outcome.isEmpty || $0.outcome == outcome)
        }
        body += "<p class=\"note\">What this instance processed since it started (the newest "
        body += "\(ConsoleActivity.keptNotifications) are kept); Apple's Get Notification History has them all.</p>"
        guard !matching.isEmpty else {
            return ("Notifications", body + "<p>No notification.</p>")
        }
        body += "<table><thead><tr>"
        body += ["When", "Type", "Subtype", "Environment", "Outcome", "Delivery", "Transaction", "Product", "Customer"]
            .map { "<th scope=\"col\">\($0)</th>" }.joined()
        body += "</tr></thead><tbody>"
        for notification in matching.prefix(Self.notificationRows) {
            let customer =
                notification.userId.map {
                    "<a href=\"/console/customer?q=\(ConsoleHTML.queryComponent($0))\">\(ConsoleHTML.escape($0))</a>"
                } ?? ""
            var delivery = notification.delivery ?? ""
            if let code = notification.errorCode {
                delivery += delivery.isEmpty ? code : " (\(code))"
            }
            body += "<tr><td>\(String(AnalyticsCalendar.format(notification.time).prefix(19)))</td>"
            body += "<td>\(ConsoleHTML.escape(notification.type ?? "did not verify"))</td>"
            body += "<td>\(ConsoleHTML.escape(notification.subtype ?? ""))</td>"
            body += "<td>\(ConsoleHTML.escape(notification.environment ?? ""))</td>"
            body += "<td>\(ConsoleHTML.escape(notification.outcome))</td><td>\(ConsoleHTML.escape(delivery))</td>"
            body += "<td>\(ConsoleHTML.escape(notification.transactionId ?? ""))</td>"
            body += "<td>\(ConsoleHTML.escape(notification.productId ?? ""))</td><td>\(customer)</td></tr>"
        }
        body += "</tbody></table>"
        if matching.count > Self.notificationRows {
            body += "<p class=\"note\">The newest \(Self.notificationRows) of \(matching.count) are shown.</p>"
        }
        return ("Notifications", body)
    }

    /// The overview's lines about the server's recent work: the fulfillment in the last hour, the last reconciliation.
    func recentWork() -> String {
        guard let activity else { return "" }
        var html = "<h2>This instance</h2><table><tbody>"
        let hour = activity.fulfillment(inTheHourBefore: pipeline.clock.now)
        let calls = hour.succeeded + hour.failed
        let share = calls == 0 ? "" : " (\(Self.percent(Double(hour.succeeded) / Double(calls))) succeeded)"
        html += "<tr><th scope=\"row\">Fulfillment calls in the last hour</th>"
        html += "<td>\(hour.succeeded) succeeded, \(hour.failed) failed\(share)</td></tr>"
        html += "<tr><th scope=\"row\">Last reconciliation</th><td>"
        if let run = activity.lastReconciliation {
            html += "\(Self.minute(run.time)): \(ConsoleHTML.escape(run.outcome))"
            if let message = run.message {
                html += " — \(ConsoleHTML.escape(message))"
            }
        } else {
            html += "none since this instance started"
        }
        html += "</td></tr></tbody></table>"
        return html
    }
}
