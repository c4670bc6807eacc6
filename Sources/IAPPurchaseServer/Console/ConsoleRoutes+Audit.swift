#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer
import IAPServerAPI

extension ConsoleRoutes {
    /// How many audit entries one page shows.
    static let auditPageSize = 50

    /// The support audit, newest first, 50 entries a page (`?before=SEQUENCE` for older ones), under the result of
    /// checking its chain and its head against the ledger's.
    func auditPage(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        var body = "<h1>Support audit</h1>"
        guard let audit else {
            return ("Support audit", body + Self.alert("The support audit is not configured."))
        }
        var before = Int.max
        if let text = request.queryValue("before") {
            guard let value = Int(text), value > 0 else {
                return ("Support audit", body + Self.alert("That page of the audit does not exist."))
            }
            before = value
        }
        let verification: SupportAuditVerification
        let entries: [SupportAuditEntry]
        do {
            verification = try await audit.verify()
            entries = try await audit.entries()
        } catch {
            return (
                "Support audit",
                body + Self.alert("The support audit cannot be read: support actions are refused until it is mended.")
            )
        }
        if verification.isIntact {
            body += "<p role=\"status\">The chain is intact: \(verification.entryCount) entries, head "
            body += "<code>\(ConsoleHTML.escape(verification.head.lastHash))</code>.</p>"
        } else {
            body += "<div role=\"alert\" class=\"error\"><p>The chain is broken: support actions are refused until "
            body += "an operator runs <code>iap support audit reseal</code>.</p><ul>"
            body += verification.problems.map { "<li>\(ConsoleHTML.escape($0.description))</li>" }.joined()
            body += "</ul></div>"
        }
        for note in verification.notes {
            body += "<p class=\"note\">\(ConsoleHTML.escape(note))</p>"
        }
        // Entries written before the log was chained have no sequence: their place in the file stands for it.
        let numbered = entries.enumerated().map {
            (number: $0.element.sequence > 0 ? $0.element.sequence : $0.offset + 1, entry: $0.element)
        }
        let page = numbered.reversed().filter { $0.number < before }.prefix(Self.auditPageSize)
        guard !page.isEmpty else {
            return ("Support audit", body + "<p>No entry.</p>")
        }
        body += "<table><thead><tr>"
        body += ["#", "When", "Who", "Action", "Order", "Customer", "Transactions"].map {
            "<th scope=\"col\">\($0)</th>"
        }.joined()
        body += "</tr></thead><tbody>"
        for (number, entry) in page {
            var outcomes: [String: Int] = [:]
            for outcome in entry.outcomes {
                outcomes[outcome.outcome, default: 0] += 1
            }
            let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            var who = ConsoleHTML.escape(entry.actor)
            if let osUser = entry.osUser {
                who += " <span class=\"note\">(OS user \(ConsoleHTML.escape(osUser)))</span>"
            }
            var action = ConsoleHTML.escape(entry.action)
            if let reseal = entry.reseal {
                action += ": \(ConsoleHTML.escape(reseal.reason))"
            }
            let customer = entry.userId.map {
                "<a href=\"/console/customer?q=\(ConsoleHTML.queryComponent($0))\">\(ConsoleHTML.escape($0))</a>"
            }
            body += "<tr><td class=\"number\">\(number)</td><td>\(Self.minute(entry.at))</td><td>\(who)</td>"
            body += "<td>\(action)</td><td>\(ConsoleHTML.escape(entry.orderId))</td><td>\(customer ?? "")</td>"
            body += "<td>\(ConsoleHTML.escape(summary))</td></tr>"
        }
        body += "</tbody></table>"
        if let last = page.last, last.number > 1, numbered.contains(where: { $0.number < last.number }) {
            body += "<p><a href=\"/console/audit?before=\(last.number)\">Older</a></p>"
        }
        return ("Support audit", body)
    }
}
