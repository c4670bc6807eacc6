import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger stats`: counts over the whole ledger.
enum LedgerStatsCommand {
    static let spec = CommandSpec(
        name: "ledger stats",
        summary: "counts over the whole ledger",
        synopsis: ["\(CommandLedger.synopsis) [--json]"],
        discussion: """
            Counts the ledger's transactions, users, deliveries, retries waiting, dead letters and revocations,
            one per line, then the transactions per App Store environment (Production, Sandbox, ...). With --json,
            one object {"transactions", "users", "delivered", "pendingRetries", "deadLetters", "revoked",
            "environments": {"Production": N, "Sandbox": M}}, an environment present only when it has a
            transaction; "unknownProduct" (parked purchases) and "givenUp" (dead letters an operator gave up in the
            console, no longer among "deadLetters") appear when they are not 0. "claimed" counts the purchases
            being delivered now (a deliverer claimed them and its claim holds) and "staleClaims" those whose claim
            has expired: their deliverer stopped (a crash, kill -9) before it recorded the outcome, and the next
            drain of due deliveries ('iap serve' drains continuously, 'iap ledger ingest' before it reads its input)
            delivers them; with delivered, retries, dead letters and parked purchases they add up to the
            transactions once nothing else is pending.
            """,
        options: CommandLedger.options + [.flag("json", "print one JSON object")],
        examples: ["iap ledger stats --data ./iap-demo-data/ledger"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        let ledger = try await CommandLedger.open(parsed)
        let statistics: LedgerStatistics
        let claims: ClaimCounts
        do {
            statistics = try await ledger.store.statistics()
            claims = try await ledger.store.claims(at: SystemClock().now)
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        if parsed.has("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard var object = try JSONSerialization.jsonObject(with: encoder.encode(statistics)) as? [String: Any]
            else {
                throw IAPError(.internalError, "the statistics did not encode as an object")
            }
            object["claimed"] = claims.claimed
            object["staleClaims"] = claims.staleClaims
            Output.write(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            Output.write("\n")
            return .success
        }
        Output.line("ledger \(ledger.description)")
        for (label, count) in [
            ("transactions", statistics.transactions), ("users", statistics.users),
            ("delivered", statistics.delivered), ("pending retries", statistics.pendingRetries),
            ("dead letters", statistics.deadLetters), ("revoked", statistics.revoked),
        ] {
            Output.line("  " + label.padding(toLength: 17, withPad: " ", startingAt: 0) + "\(count)")
        }
        if claims.claimed > 0 {
            Output.line(
                "  " + "being delivered".padding(toLength: 17, withPad: " ", startingAt: 0)
                    + "\(claims.claimed) (claimed by a deliverer, the claim not expired)"
            )
        }
        if claims.staleClaims > 0 {
            let since = claims.oldestStaleSince.map { " since \(TextDate.text($0))" } ?? ""
            Output.line(
                "  " + "stale claims".padding(toLength: 17, withPad: " ", startingAt: 0)
                    + "\(claims.staleClaims) (claims expired\(since): their deliverer stopped; the next drain delivers "
                    + "them)"
            )
        }
        if statistics.givenUp > 0 {
            Output.line(
                "  " + "given up".padding(toLength: 17, withPad: " ", startingAt: 0)
                    + "\(statistics.givenUp) (dead letters an operator gave up)"
            )
        }
        if statistics.unknownProduct > 0 {
            // Shown only when there are some: parked, their product unknown to the catalog.
            Output.line(
                "  " + "unknown product".padding(toLength: 17, withPad: " ", startingAt: 0)
                    + "\(statistics.unknownProduct) (parked until the catalog names it)"
            )
        }
        let environments = statistics.environments.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        Output.line(
            "  " + "environments".padding(toLength: 17, withPad: " ", startingAt: 0)
                + (environments.isEmpty ? "-" : environments.joined(separator: ", "))
        )
        return .success
    }
}
