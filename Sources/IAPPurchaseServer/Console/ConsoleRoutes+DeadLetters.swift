#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer
import IAPServerAPI

extension ConsoleRoutes {
    /// The most rows each table of the dead-letters page shows.
    static let deadLetterRows = 200

    /// The dead letters waiting for a person, the deliveries waiting for their retry, and the dead letters given up:
    /// why, how many attempts, and `Retry now` (support and admin) and `Give up` (admin) on each.
    func deadLetters(_ session: ConsoleSession, _ notice: String? = nil) async -> (title: String, body: String) {
        var body = "<h1>Dead letters and retries</h1>"
        if let notice {
            body += notice
        }
        guard let ledger else {
            return ("Dead letters", body + Self.alert("The ledger cannot be read whole here."))
        }
        var entries: [LedgerEntry] = []
        do {
            // A page at a time: the memory of the entries shown, whatever the ledger's size.
            try await ledger.forEachPage(size: 5_000) { page in
                entries += page.filter { $0.deliveryState == .deadLettered || $0.deliveryState == .retrying }
            }
        } catch {
            return ("Dead letters", body + Self.alert("The ledger cannot be read now."))
        }
        let newestFirst = entries.sorted { $0.sequence > $1.sequence }
        let sections: [(String, String, [LedgerEntry])] = [
            (
                "Dead letters", "Delivery failed for good or too often: nothing retries them.",
                newestFirst.filter { $0.deliveryState == .deadLettered && $0.givenUpAt == nil }
            ),
            (
                "Waiting for a retry", "The retry queue tries them again at the time shown.",
                newestFirst.filter { $0.deliveryState == .retrying }
            ),
            (
                "Given up", "An operator gave them up: they stay undelivered, and out of the dead letters' count.",
                newestFirst.filter { $0.deliveryState == .deadLettered && $0.givenUpAt != nil }
            ),
        ]
        for (title, note, rows) in sections {
            body += "<h2>\(title) (\(rows.count))</h2><p class=\"note\">\(note)</p>"
            guard !rows.isEmpty else { continue }
            body += "<table><thead><tr>"
            body += ["Recorded", "Customer", "Product", "Transaction", "Attempts", "Next attempt", "Reason", ""].map {
                "<th scope=\"col\">\($0)</th>"
            }.joined()
            body += "</tr></thead><tbody>"
            for entry in rows.prefix(Self.deadLetterRows) {
                body += deadLetterRow(entry, session: session)
            }
            body += "</tbody></table>"
            if rows.count > Self.deadLetterRows {
                body += "<p class=\"note\">The newest \(Self.deadLetterRows) of \(rows.count) are shown.</p>"
            }
        }
        return ("Dead letters", body)
    }

    private func deadLetterRow(_ entry: LedgerEntry, session: ConsoleSession) -> String {
        let customer =
            entry.owner.map {
                "<a href=\"/console/customer?q=\(ConsoleHTML.queryComponent($0))\">\(ConsoleHTML.escape($0))</a>"
            } ?? "nobody yet"
        let action = pendingActionName(entry)
        var reason = entry.lastError ?? ""
        if let givenUp = entry.givenUpAt {
            reason += reason.isEmpty ? "" : "; "
            reason += "given up \(Self.minute(givenUp))"
        }
        var row = "<tr><td>\(Self.minute(entry.recordedAt))</td><td>\(customer)</td>"
        row += "<td>\(ConsoleHTML.escape(entry.productId))\(action)</td>"
        row += "<td>\(ConsoleHTML.escape(entry.transactionId))</td>"
        row += "<td class=\"number\">\(entry.deliveryAttempts)</td>"
        row += "<td>\(entry.deliveryState == .retrying ? Self.minute(entry.nextAttemptAt) : "")</td>"
        row += "<td>\(ConsoleHTML.escape(reason))</td><td>"
        let csrf = sessions.csrfToken(for: session)
        let transaction = ConsoleHTML.escape(entry.transactionId)
        if session.role.mayRedeliver {
            row += """
                <form method="post" action="/console/dead-letters/retry">\
                <input type="hidden" name="csrf" value="\(csrf)">\
                <input type="hidden" name="transaction" value="\(transaction)">\
                <button type="submit">Retry now</button></form>
                """
        }
        if session.role.mayGiveUp, entry.deliveryState == .deadLettered, entry.givenUpAt == nil {
            row += """
                <form method="post" action="/console/dead-letters/give-up">\
                <input type="hidden" name="csrf" value="\(csrf)">\
                <input type="hidden" name="transaction" value="\(transaction)">\
                <button type="submit">Give up</button></form>
                """
        }
        return row + "</td></tr>"
    }

    /// ` (take-back)` for an entry whose revocation is what waits.
    private func pendingActionName(_ entry: LedgerEntry) -> String {
        entry.revokedAt != nil ? " <span class=\"note\">(take-back)</span>" : ""
    }

    /// `Retry now`: the delivery is called at once (``DeliveryPipeline/redeliver(transactionId:)``), audited before
    /// (`retry.requested`) and after (`retry.completed`, with the outcome).
    func retryNow(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        let transactionId = ConsoleHTML.form(request.body)["transaction"] ?? ""
        guard let audit else {
            return await deadLetters(session, Self.alert("Retrying needs the support audit, which is not configured."))
        }
        guard let entry = try? await pipeline.store.entry(transactionId: transactionId),
            entry.deliveryState == .deadLettered || entry.deliveryState == .retrying
        else {
            return await deadLetters(session, Self.alert("That delivery is not waiting for a retry any more."))
        }
        guard
            await appendAudit(
                "retry.requested",
                entry: entry,
                outcome: "requested",
                error: nil,
                session: session,
                in: audit
            )
        else {
            return await deadLetters(session, Self.auditRefusal)
        }
        let outcome: DeliveryOutcome?
        var failure: String?
        do {
            outcome = try await pipeline.redeliver(transactionId: transactionId)
        } catch {
            outcome = nil
            failure = IAPError.wrapping(error, as: .storageFailure, "the retry failed").message
        }
        var error = failure
        switch outcome {
        case .deferred(_, let reason), .rejected(let reason):
            error = reason.message
        default:
            break
        }
        let name = outcome?.name ?? (failure == nil ? "notWaiting" : "failed")
        _ = await appendAudit("retry.completed", entry: entry, outcome: name, error: error, session: session, in: audit)
        let said =
            "<p role=\"status\">Transaction \(ConsoleHTML.escape(transactionId)) retried: \(ConsoleHTML.escape(name))"
            + (error.map { " (\(ConsoleHTML.escape($0)))" } ?? "") + ".</p>"
        return await deadLetters(session, said)
    }

    /// `Give up` (admin): the dead letter leaves the count of those waiting for a person
    /// (``DeliveryPipeline/giveUp(transactionId:)``), audited before the ledger changes (`deadLetter.giveUp`).
    func giveUp(_ session: ConsoleSession, _ request: HTTPServerRequest) async -> (title: String, body: String) {
        let transactionId = ConsoleHTML.form(request.body)["transaction"] ?? ""
        guard let audit else {
            return await deadLetters(session, Self.alert("Giving up needs the support audit, which is not configured."))
        }
        guard let entry = try? await pipeline.store.entry(transactionId: transactionId),
            entry.deliveryState == .deadLettered, entry.givenUpAt == nil
        else {
            return await deadLetters(session, Self.alert("That transaction is not a dead letter waiting for a person."))
        }
        guard
            await appendAudit(
                "deadLetter.giveUp",
                entry: entry,
                outcome: "givenUp",
                error: entry.lastError,
                session: session,
                in: audit
            )
        else {
            return await deadLetters(session, Self.auditRefusal)
        }
        do {
            guard try await pipeline.giveUp(transactionId: transactionId) != nil else {
                return await deadLetters(session, Self.alert("It changed meanwhile: nothing was given up."))
            }
        } catch {
            return await deadLetters(session, Self.alert("The ledger refused the change: try again later."))
        }
        return await deadLetters(
            session,
            "<p role=\"status\">Transaction \(ConsoleHTML.escape(transactionId)) given up.</p>"
        )
    }

    static let auditRefusal = alert("The support audit cannot be written now, so nothing was done.")

    /// Appends an audit entry for a console action on one transaction; `false` when it could not be written.
    private func appendAudit(
        _ action: String,
        entry: LedgerEntry,
        outcome: String,
        error: String?,
        session: ConsoleSession,
        in audit: any SupportAuditLog
    ) async -> Bool {
        do {
            try await audit.checkWritable()
            try await audit.append(
                SupportAuditEntry(
                    at: pipeline.clock.now,
                    actor: Self.actor(session),
                    action: action,
                    orderId: entry.orderId ?? "",
                    userId: entry.owner,
                    outcomes: [
                        .init(
                            transactionId: entry.transactionId,
                            outcome: outcome,
                            error: error,
                            productId: entry.productId
                        )
                    ]
                )
            )
            return true
        } catch {
            record("console.\(action)", session.operatorName, outcome: "auditRefused")
            return false
        }
    }
}
