import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger history`: a user's orders, newest first, a page at a time.
enum LedgerHistoryCommand {
    static let spec = CommandSpec(
        name: "ledger history",
        summary: "a user's orders, newest first, a page at a time",
        synopsis: ["\(CommandLedger.synopsis) --user ID [--limit N] [--cursor C] [--json]"],
        discussion: """
            Lists the user's orders, newest first: transaction id, product, state (delivered, pending, retrying,
            deadLettered, awaitingOwner, revoked) and purchase date in ISO 8601 UTC. When there is more, the last
            line is 'more: --cursor C'. With --json, one object {"user", "items": [...], "nextCursor"}, with
            Apple's field names and dates in milliseconds.
            """,
        options: CommandLedger.options + [
            .value("user", "ID", "whose orders (required)"),
            .value("limit", "N", "orders per page, 1 to 200 (default 20)"),
            .value("cursor", "C", "the page after the one that printed 'more: --cursor C'"),
            .flag("json", "print one JSON object, dates in milliseconds since 1970"),
        ],
        examples: ["iap ledger history --data ./iap-demo-data/ledger --user alice --limit 5"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        _ = try CommandLedger.location(parsed)
        guard let user = try parsed.userId("user") else {
            throw Arguments.UsageError(message: "--user ID is required")
        }
        let limit =
            try parsed.value("limit").map { value throws(Arguments.UsageError) -> Int in
                guard let number = Int(value), (1...200).contains(number) else {
                    throw Arguments.UsageError(message: "--limit must be a whole number from 1 to 200, not '\(value)'")
                }
                return number
            } ?? 20
        let ledger = try await CommandLedger.open(parsed)
        let store = ledger.store
        let page: OrderHistoryPage
        do {
            page = try await OrderHistory(store: store).page(
                userId: user,
                cursor: try parsed.value("cursor"),
                limit: limit
            )
        } catch let error as IAPError where error.code == .invalidArgument {
            await ledger.close()
            throw Arguments.UsageError(message: error.message)
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        if parsed.has("json") {
            Output.write(try page.jsonData(userId: user))
            Output.write("\n")
        } else {
            for item in page.items {
                let expires = item.expiresDate.map { "  until \(TextDate.text($0))" } ?? ""
                Output.line(
                    "\(item.transactionId)  \(item.productId)  \(item.state.rawValue)  \(TextDate.text(item.purchaseDate))\(expires)"
                )
            }
            if let next = page.nextCursor {
                Output.line("more: --cursor \(next)")
            }
        }
        return .success
    }
}
