import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger history`: a user's orders, newest first, a page at a time.
enum LedgerHistoryCommand {
    static let spec = CommandSpec(
        name: "ledger history",
        summary: "a user's orders, newest first, a page at a time; or every purchase of an Apple Account",
        synopsis: [
            "\(CommandLedger.synopsis) --user ID [--limit N] [--cursor C] [--bundle-id ID] [--json]",
            "\(CommandLedger.synopsis) --app-transaction-id ID [--json]",
        ],
        discussion: """
            Lists the user's orders, newest first: transaction id, product, state (delivered, pending, retrying,
            deadLettered, awaitingOwner, revoked) and purchase date in ISO 8601 UTC. When there is more, the last
            line is 'more: --cursor C'. With --json, one object {"user", "items": [...], "nextCursor"}, with
            Apple's field names and dates in milliseconds.

            With --app-transaction-id ID instead of --user: every purchase whose signed transaction carries that app
            transaction id (one Apple Account in this app, whichever of the app's users it was bought for, with or
            without an app account token), newest first, each line ending with its owner ('nobody yet' while it
            waits for one). With --json, {"appTransactionId", "items": [...]}, each item with its "userId" (null
            while it waits for its owner).
            """,
        options: CommandLedger.options + [
            .value("user", "ID", "whose orders"),
            .value("app-transaction-id", "ID", "the purchases of one Apple Account, instead of --user"),
            .value("limit", "N", "orders per page, 1 to 200 (default 20)"),
            .value("cursor", "C", "the page after the one that printed 'more: --cursor C'"),
            CommandLedger.appOption,
            .flag("json", "print one JSON object, dates in milliseconds since 1970"),
        ],
        examples: ["iap ledger history --data ./iap-demo-data/ledger --user alice --limit 5"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        _ = try CommandLedger.location(parsed)
        if let account = try parsed.value("app-transaction-id") {
            return try await appAccount(account, parsed)
        }
        guard let user = try parsed.userId("user") else {
            throw Arguments.UsageError(message: "--user ID or --app-transaction-id ID is required")
        }
        let limit =
            try parsed.value("limit").map { value throws(Arguments.UsageError) -> Int in
                guard let number = Int(value), (1...200).contains(number) else {
                    throw Arguments.UsageError(message: "--limit must be a whole number from 1 to 200, not '\(value)'")
                }
                return number
            } ?? 20
        let filter = OrderHistoryFilter(bundleId: try CommandLedger.bundleId(parsed))
        let ledger = try await CommandLedger.open(parsed)
        let store = ledger.store
        let page: OrderHistoryPage
        do {
            page = try await OrderHistory(store: store).page(
                userId: user,
                cursor: try parsed.value("cursor"),
                limit: limit,
                filter: filter
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

    /// `--app-transaction-id ID`: every purchase of one Apple Account, newest first, with its owner.
    private static func appAccount(_ appTransactionId: String, _ parsed: Arguments) async throws -> ExitCode {
        for alone in ["user", "limit", "cursor", "bundle-id"] where try parsed.value(alone) != nil {
            throw Arguments.UsageError(message: "--app-transaction-id goes without --\(alone)")
        }
        guard AppAccountHistory.isValid(appTransactionId: appTransactionId) else {
            throw Arguments.UsageError(
                message: "--app-transaction-id must be 1 to 64 visible ASCII characters, such as 704289572311"
            )
        }
        let ledger = try await CommandLedger.open(parsed)
        let history: AppAccountHistory
        do {
            history = try await AppAccountHistory.read(appTransactionId: appTransactionId, from: ledger.store)
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        if parsed.has("json") {
            Output.write(try history.jsonData())
            Output.write("\n")
            return .success
        }
        for purchase in history.purchases {
            let item = purchase.item
            let expires = item.expiresDate.map { "  until \(TextDate.text($0))" } ?? ""
            Output.line(
                "\(item.transactionId)  \(item.productId)  \(item.state.rawValue)  \(TextDate.text(item.purchaseDate))"
                    + "\(expires)  \(purchase.owner.map(Output.escapedUserId) ?? "nobody yet")"
            )
        }
        if history.purchases.isEmpty {
            Output.line("no purchase carries app transaction id \(appTransactionId)")
        }
        return .success
    }
}
