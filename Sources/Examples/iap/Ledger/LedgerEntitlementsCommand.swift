import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger entitlements`: what a user has at an instant, with consumable balances.
enum LedgerEntitlementsCommand {
    static let spec = CommandSpec(
        name: "ledger entitlements",
        summary: "what a user has now (or at an instant), with consumable balances",
        synopsis: [
            "\(CommandLedger.synopsis) --user ID",
            "  [--at now|MILLIS|ISO8601] [--catalog FILE] [--bundle-id ID] [--json]",
        ],
        discussion: """
            Evaluates the user's transactions and renewal infos in the ledger with the catalog: one line per
            product (product, type, state, and the expiry in ISO 8601 UTC), then each consumable balance. With
            --json, one object {"user", "at", "entitlements": [...], "balances": {...}}, dates in milliseconds.
            """,
        options: CommandLedger.options + [
            .value("user", "ID", "whose entitlements (required)"),
            .value("at", "INSTANT", "now (the default), milliseconds since 1970, or ISO 8601 (2026-03-11T10:30:00Z)"),
            CommandLedger.catalogOption,
            CommandLedger.appOption,
            .flag("json", "print one JSON object, dates in milliseconds since 1970"),
        ],
        examples: ["iap ledger entitlements --data ./iap-demo-data/ledger --user bob --at 2026-03-11T10:30:00Z"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        _ = try CommandLedger.location(parsed)
        guard let user = try parsed.userId("user") else {
            throw Arguments.UsageError(message: "--user ID is required")
        }
        let instant: Date
        switch try parsed.value("at") {
        case nil, "now":
            instant = SystemClock().now
        case let value?:
            instant = try TextDate.instant(value, option: "at")
        }
        let bundleId = try CommandLedger.bundleId(parsed)
        let ledger = try await CommandLedger.open(parsed)
        let store = ledger.store
        let entries: [LedgerEntry]
        let products: StaticProductCatalog?
        var renewals: [RenewalInfoPayload] = []
        do {
            products = try await ledger.catalog(parsed, save: false)
            entries = try await store.allHistory(userId: user).filter {
                bundleId == nil || $0.transaction.bundleId == bundleId
            }
            for original in Set(entries.map(\.originalTransactionId)).sorted() {
                if let renewal = try await store.renewalInfo(originalTransactionId: original) {
                    renewals.append(renewal)
                }
            }
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        // Without a catalog, each product is what its latest signed transaction says, as --ledger-only delivered it.
        let catalog =
            try products
            ?? StaticProductCatalog(
                products: Set(entries.map(\.productId)).sorted().compactMap { productId in
                    entries.last { $0.productId == productId }.flatMap {
                        UnknownProductPolicy.product(describedBy: $0.transaction)
                    }
                }
            )
        if products == nil {
            Output.error("note: no catalog: each product is taken as its signed transaction's type says")
        }
        let snapshot = EntitlementEngine(catalog: catalog).evaluate(
            entries: entries,
            renewalInfos: renewals,
            at: instant
        )

        let listing = EntitlementListing(userId: user, snapshot: snapshot, entries: entries)
        if parsed.has("json") {
            Output.write(try listing.jsonData())
            Output.write("\n")
        } else {
            Output.line("entitlements of \(user) at \(TextDate.text(instant))")
            for row in listing.rows {
                let expires = row.expiresDate.map { " until \(TextDate.text($0))" } ?? ""
                var commitment = row.commitmentExpiresDate.map { ", commitment until \(TextDate.text($0))" } ?? ""
                if let owed = row.commitmentRenewalsOwed {
                    commitment += " (\(owed) renewal\(owed == 1 ? "" : "s") owed)"
                }
                Output.line("  \(row.productId)  \(row.kind.rawValue)  \(row.state.rawValue)\(expires)\(commitment)")
            }
            for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
                Output.line(
                    "  balance \(productId): \(balance.balance)\(balance.debt > 0 ? " (debt \(balance.debt))" : "")"
                )
            }
        }
        return .success
    }
}
