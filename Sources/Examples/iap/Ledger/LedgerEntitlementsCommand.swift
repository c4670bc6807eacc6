import Foundation
import IAPCore

/// `iap ledger entitlements`: what a user has at an instant, with consumable balances.
enum LedgerEntitlementsCommand {
    static let spec = CommandSpec(
        name: "ledger entitlements",
        summary: "what a user has now (or at an instant), with consumable balances",
        synopsis: [
            "\(CommandLedger.synopsis) --user ID",
            "  [--at now|MILLIS|ISO8601] [--catalog FILE] [--json]",
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
            .flag("json", "print one JSON object, dates in milliseconds since 1970"),
        ],
        examples: ["iap ledger entitlements --data ./iap-demo-data/ledger --user bob --at 2026-03-11T10:30:00Z"]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        _ = try CommandLedger.location(parsed)
        guard let user = try parsed.value("user") else {
            throw Arguments.UsageError(message: "--user ID is required")
        }
        let instant: Date
        switch try parsed.value("at") {
        case nil, "now":
            instant = SystemClock().now
        case let value?:
            instant = try TextDate.instant(value, option: "at")
        }
        let ledger = try await CommandLedger.open(parsed)
        let store = ledger.store
        let entries: [LedgerEntry]
        let products: StaticProductCatalog?
        var renewals: [RenewalInfoPayload] = []
        do {
            products = try await ledger.catalog(parsed, save: false)
            entries = try await store.allHistory(userId: user)
            for original in Set(entries.map(\.originalTransactionId)).sorted() {
                if let renewal = try await store.renewalInfo(originalTransactionId: original) {
                    renewals.append(renewal)
                }
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        let catalog =
            try products
            ?? StaticProductCatalog(
                products: Set(entries.map(\.productId)).sorted().map {
                    CatalogProduct(productId: $0, kind: .nonConsumable)
                }
            )
        if products == nil {
            Output.error("note: no catalog: every product is treated as a non-consumable")
        }
        let snapshot = EntitlementEngine(catalog: catalog).evaluate(
            entries: entries,
            renewalInfos: renewals,
            at: instant
        )

        var rows: [Row] = snapshot.entitlements.map { item in
            Row(
                productId: item.productId,
                type: item.kind.rawValue,
                state: item.state.rawValue,
                hasAccess: item.hasAccess,
                expiresDate: item.expiresDate,
                originalTransactionId: item.originalTransactionId
            )
        }
        // Consumables show in the list too: active while any delivered purchase stands, revoked when all were refunded.
        for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
            let purchases = entries.filter { $0.productId == productId }.sorted { $0.sequence < $1.sequence }
            let standing = purchases.contains {
                $0.revokedAt == nil && $0.transaction.revocationDate == nil && $0.deliveredAt != nil
            }
            rows.append(
                Row(
                    productId: productId,
                    type: ProductKind.consumable.rawValue,
                    state: (standing ? EntitlementState.active : EntitlementState.revoked).rawValue,
                    hasAccess: balance.balance > 0,
                    expiresDate: nil,
                    originalTransactionId: purchases.last?.originalTransactionId ?? ""
                )
            )
        }
        rows.sort { $0.productId < $1.productId }
        if parsed.has("json") {
            let document: [String: Any] = [
                "user": user, "at": instant.millisecondsSince1970, "entitlements": rows.map(\.json),
                "balances": snapshot.balances.mapValues { $0.balance },
            ]
            Output.write(
                try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            )
            Output.write("\n")
        } else {
            Output.line("entitlements of \(user) at \(TextDate.text(instant))")
            for row in rows {
                let expires = row.expiresDate.map { " until \(TextDate.text($0))" } ?? ""
                Output.line("  \(row.productId)  \(row.type)  \(row.state)\(expires)")
            }
            for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
                Output.line(
                    "  balance \(productId): \(balance.balance)\(balance.debt > 0 ? " (debt \(balance.debt))" : "")"
                )
            }
        }
        return .success
    }

    /// One line of the answer.
    struct Row {
        let productId: String
        let type: String
        let state: String
        let hasAccess: Bool
        let expiresDate: Date?
        let originalTransactionId: String

        /// The row as `--json` prints it: dates in milliseconds.
        var json: [String: Any] {
            [
                "productId": productId, "type": type, "state": state, "hasAccess": hasAccess,
                "expiresDate": expiresDate.map { $0.millisecondsSince1970 as Any } ?? NSNull(),
                "originalTransactionId": originalTransactionId,
            ]
        }
    }
}
