import Foundation
import IAPCore
import IAPCrypto
import IAPStorageFile
import IAPStoragePostgres

/// `iap ledger`: the ledger from the command line, in a directory or in PostgreSQL.
enum LedgerCommand {
    static let usage = """
        usage: iap ledger ingest LEDGER [--catalog FILE] [--root FILE.der]... [--bundle-id ID]
                                 [--environment ENV] [--app-apple-id N] [--user ID] [FILE|-]
               iap ledger entitlements LEDGER --user ID [--at now|MILLIS] [--catalog FILE] [--json]
               iap ledger history LEDGER --user ID [--limit N] [--cursor C] [--json]
               iap ledger stats LEDGER [--json]
               iap ledger check LEDGER
               iap ledger export LEDGER

        LEDGER is exactly one of
          --data DIR                      the file store in a directory
          --database URL [--schema NAME]  PostgreSQL (postgres://user:password@host:port/db?sslmode=...),
                                          in schema NAME (default public); several processes may share it

        ingest        each input line is a signed transaction, a signed renewal info or a notification
                      signedPayload; each is verified and recorded. After each line is durable it prints
                      'ACK <transactionId|notificationUUID|-> <outcome>'; a rejected line prints
                      'REJECT <line-number> <error-code>' and ingestion goes on.
        entitlements  what a user has now (or at MILLIS), with consumable balances
        history       a user's orders, newest first, a page at a time
        stats         counts over the whole ledger
        check         verifies checksums and invariants; exit 1 with the reason if broken
        export        every entry as one JSON object per line (a readable backup)

        --catalog FILE is saved with the ledger (DIR/catalog.json, or the iap_catalog table) and used by later
        commands; without any catalog, products are treated as non-consumables.
        """

    static func run(_ arguments: [String]) async -> Never {
        guard let sub = arguments.first, sub != "--help", sub != "help" else {
            Output.line(usage)
            terminate(arguments.isEmpty ? .usage : .success)
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch sub {
            case "ingest": try await ingest(rest)
            case "entitlements": try await entitlements(rest)
            case "history": try await history(rest)
            case "stats": try await stats(rest)
            case "check": try await check(rest)
            case "export": try await export(rest)
            default: throw Arguments.UsageError(message: "unknown ledger command '\(sub)'")
            }
        } catch let error as Arguments.UsageError {
            Output.error("error: usage: \(error.message)")
            Output.error(usage)
            terminate(.usage)
        } catch let error as Input.ReadError {
            Output.error("error: \(error.message)")
            terminate(.usage)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the ledger command failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
        terminate(.success)
    }

    // MARK: - Opening

    /// The catalog: `--catalog` (saved with the ledger when `save`), else the saved one, else none.
    static func catalog(_ arguments: Arguments, ledger: CommandLedger, save: Bool) async throws
        -> StaticProductCatalog?
    {
        if let path = try arguments.value("catalog") {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw Arguments.UsageError(message: "cannot read the catalog \(path): \(error.localizedDescription)")
            }
            let catalog = try StaticProductCatalog(jsonData: data)
            if save {
                try await ledger.saveCatalog(data)
            }
            return catalog
        }
        if let saved = try await ledger.savedCatalog() {
            return try StaticProductCatalog(jsonData: saved)
        }
        return nil
    }

    // MARK: - ingest

    static func ingest(_ arguments: [String]) async throws {
        let parsed = try Arguments(
            arguments,
            options: CommandLedger.options.union([
                "catalog", "root", "bundle-id", "environment", "app-apple-id", "user", "compaction-threshold",
                "grant-log",
            ]),
            flags: ["strict-x509"]
        )
        if case .database = try CommandLedger.location(parsed), parsed.options["compaction-threshold"] != nil {
            throw Arguments.UsageError(message: "--compaction-threshold applies to a --data ledger only")
        }
        let settings = try VerifyCommand.Settings(parsed)
        let user = try parsed.value("user")
        if user?.isEmpty == true {
            throw Arguments.UsageError(message: "--user must not be empty")
        }
        var options = FileEntitlementStore.Options()
        if let threshold = try parsed.value("compaction-threshold") {
            guard let bytes = Int(threshold), bytes >= 4_096 else {
                throw Arguments.UsageError(message: "--compaction-threshold takes a number of bytes, at least 4096")
            }
            options.compactionThreshold = bytes
        }
        let grantLog = try parsed.value("grant-log").map(GrantLog.init(path:))
        let input = try parsed.singlePositional()
        let descriptor = try Input.descriptor(input)
        let verifier = try AppStoreSignedDataVerifier(configuration: settings.configuration)
        for note in settings.skippedChecks {
            Output.error("note: \(note)")
        }
        // Take the ledger first: a second process must not replace the catalog the first one works with.
        let ledger = try await CommandLedger.open(parsed, create: true, options: options)
        let store = ledger.store
        let products = try await catalog(parsed, ledger: ledger, save: true)
        if products == nil {
            Output.error(
                "note: no catalog (--catalog, or one saved with the ledger in \(ledger.name)): every product is treated as a non-consumable"
            )
        }
        let catalog: any ProductCatalog = products ?? NonConsumableCatalog()
        // The file ledger's lock admits one process at a time, so a claim found at start belongs to a dead
        // process: claims need not outlive the call that takes them. A database ledger is shared by every
        // process that opens it, so there a claim holds for the default time, and a drain skips the deliveries
        // other processes hold.
        // Without --user, a transaction belongs to the user bound to its appAccountToken, else to the token.
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: store,
            hook: ClosureFulfillmentHook(
                grant: { delivery in try grantLog?.append("grant \(delivery.idempotencyKey)") },
                revoke: { delivery in try grantLog?.append("revoke \(delivery.idempotencyKey)") }
            ),
            retryPolicy: ledger.isShared ? RetryPolicy() : RetryPolicy(claimDuration: .zero),
            unclaimedTokenPolicy: .tokenIsUser
        )
        let processor = NotificationProcessor(verifier: verifier, pipeline: pipeline, store: store)
        while true {
            let report = await pipeline.drainDueRetries(limit: 1_000)
            if let error = report.errors.first {
                throw error
            }
            if report.delivered + report.deferred == 0 {
                break
            }
        }

        var reader = LineReader(descriptor: descriptor)
        var number = 0
        while let line = reader.next() {
            number += 1
            let answer = await ingestLine(
                Input.token(fromText: line),
                number: number,
                verifier: verifier,
                pipeline: pipeline,
                processor: processor,
                store: store,
                user: user
            )
            Output.line(answer.line)
            Output.flush()
            if let failure = answer.storeFailure {
                // The ledger itself is failing: stop rather than reject every following line.
                Output.error("error: \(failure.code.rawValue): \(failure.message)")
                await store.close()
                terminate(.rejected)
            }
        }
        if descriptor != 0 {
            close(descriptor)
        }
        await store.close()
        terminate(.success)
    }

    static func ingestLine(
        _ token: String,
        number: Int,
        verifier: AppStoreSignedDataVerifier,
        pipeline: DeliveryPipeline,
        processor: NotificationProcessor,
        store: any EntitlementStore,
        user: String?
    ) async -> IngestAnswer {
        func reject(_ error: any Error) -> IngestAnswer {
            let failure = IAPError.wrapping(error, as: .internalError, "unexpected failure")
            let storeFailed = [IAPError.Code.storageFailure, .storageLocked, .storageCorrupted].contains(failure.code)
            return IngestAnswer(
                line: "REJECT \(number) \(failure.code.rawValue)",
                storeFailure: storeFailed ? failure : nil
            )
        }
        func ack(_ text: String) -> IngestAnswer {
            IngestAnswer(line: "ACK " + text, storeFailure: nil)
        }
        do {
            switch try verifier.detectKind(token) {
            case .transaction:
                let outcome = await pipeline.submit(signedTransaction: token, userId: user)
                if case .rejected(let error) = outcome {
                    return reject(error)
                }
                return ack("\(outcome.entry?.transactionId ?? "-") \(outcome.name)")
            case .renewal:
                let renewal = try verifier.renewalInfo(token)
                let stored = try await store.storeRenewalInfo(renewal)
                return ack("- \(stored ? "stored" : "stale")")
            case .notification:
                let notification = try verifier.notification(token)
                let uuid = notification.payload.notificationUUID ?? "-"
                switch await processor.process(notification, userId: user) {
                case .processed(_, let delivery):
                    if case .rejected(let error) = delivery {
                        return reject(error)
                    }
                    return ack("\(uuid) \(delivery?.name ?? "processed")")
                case .duplicate:
                    return ack("\(uuid) duplicate")
                case .unowned:
                    return ack("\(uuid) unowned")
                case .rejected(let error), .failed(let error):
                    return reject(error)
                }
            case .appTransaction:
                _ = try verifier.appTransaction(token)
                return ack("- verified")
            }
        } catch {
            return reject(error)
        }
    }

    // MARK: - entitlements

    static func entitlements(_ arguments: [String]) async throws {
        let parsed = try Arguments(
            arguments,
            options: CommandLedger.options.union(["user", "at", "catalog"]),
            flags: ["json"]
        )
        _ = try CommandLedger.location(parsed)
        guard let user = try parsed.value("user") else {
            throw Arguments.UsageError(message: "--user ID is required")
        }
        let instant: Date
        switch try parsed.value("at") {
        case nil, "now":
            instant = SystemClock().now
        case let value?:
            guard let millis = Int64(value) else {
                throw Arguments.UsageError(message: "--at must be 'now' or milliseconds since 1970, not '\(value)'")
            }
            instant = Date(millisecondsSince1970: millis)
        }
        let ledger = try await CommandLedger.open(parsed)
        let store = ledger.store
        let products = try await catalog(parsed, ledger: ledger, save: false)
        let entries = try await allEntries(of: user, in: store)
        var renewals: [RenewalInfoPayload] = []
        for original in Set(entries.map(\.originalTransactionId)).sorted() {
            if let renewal = try await store.renewalInfo(originalTransactionId: original) {
                renewals.append(renewal)
            }
        }
        await store.close()
        let catalog =
            try products
            ?? StaticProductCatalog(
                products: Set(entries.map(\.productId)).sorted().map {
                    CatalogProduct(productId: $0, kind: .nonConsumable, entitlements: [$0])
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

        var rows: [[String: Any]] = snapshot.entitlements.map { item in
            [
                "productId": item.productId, "type": item.kind.rawValue, "state": item.state.rawValue,
                "hasAccess": item.hasAccess,
                "expiresDate": item.expiresDate.map { $0.millisecondsSince1970 as Any } ?? NSNull(),
                "originalTransactionId": item.originalTransactionId,
            ]
        }
        // Consumables show in the list too: active while any delivered purchase stands, revoked when all were refunded.
        for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
            let purchases = entries.filter { $0.productId == productId }.sorted { $0.sequence < $1.sequence }
            let standing = purchases.contains {
                $0.revokedAt == nil && $0.transaction.revocationDate == nil && $0.deliveredAt != nil
            }
            rows.append([
                "productId": productId, "type": ProductKind.consumable.rawValue,
                "state": (standing ? EntitlementState.active : EntitlementState.revoked).rawValue,
                "hasAccess": balance.balance > 0, "expiresDate": NSNull(),
                "originalTransactionId": purchases.last?.originalTransactionId ?? "",
            ])
        }
        rows.sort { ($0["productId"] as? String ?? "") < ($1["productId"] as? String ?? "") }
        if parsed.has("json") {
            let document: [String: Any] = [
                "user": user, "at": instant.millisecondsSince1970, "entitlements": rows,
                "balances": snapshot.balances.mapValues { $0.balance },
            ]
            Output.write(
                try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            )
            Output.write("\n")
        } else {
            Output.line("entitlements of \(user) at \(instant.millisecondsSince1970) ms")
            for row in rows {
                let expires = (row["expiresDate"] as? Int64).map { " until \($0)" } ?? ""
                Output.line("  \(row["productId"] ?? "")  \(row["type"] ?? "")  \(row["state"] ?? "")\(expires)")
            }
            for (productId, balance) in snapshot.balances.sorted(by: { $0.key < $1.key }) {
                Output.line(
                    "  balance \(productId): \(balance.balance)\(balance.debt > 0 ? " (debt \(balance.debt))" : "")"
                )
            }
        }
        terminate(.success)
    }

    static func allEntries(of user: String, in store: some EntitlementStore) async throws -> [LedgerEntry] {
        try await store.allHistory(userId: user)
    }

    // MARK: - history, stats, check, export

    static func history(_ arguments: [String]) async throws {
        let parsed = try Arguments(
            arguments,
            options: CommandLedger.options.union(["user", "limit", "cursor"]),
            flags: ["json"]
        )
        _ = try CommandLedger.location(parsed)
        guard let user = try parsed.value("user") else {
            throw Arguments.UsageError(message: "--user ID is required")
        }
        let limit =
            try parsed.value("limit").map { value -> Int in
                guard let number = Int(value), (1...200).contains(number) else {
                    throw Arguments.UsageError(message: "--limit must be a whole number from 1 to 200, not '\(value)'")
                }
                return number
            } ?? 20
        let store = try await CommandLedger.open(parsed).store
        let page: OrderHistoryPage
        do {
            page = try await OrderHistory(store: store).page(
                userId: user,
                cursor: try parsed.value("cursor"),
                limit: limit
            )
        } catch let error as IAPError where error.code == .invalidArgument {
            await store.close()
            throw Arguments.UsageError(message: error.message)
        }
        await store.close()
        let items = try JSONSerialization.jsonObject(with: try AppStoreJSON.makeEncoder().encode(page.items))
        if parsed.has("json") {
            let document: [String: Any] = ["user": user, "items": items, "nextCursor": page.nextCursor ?? NSNull()]
            Output.write(
                try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            )
            Output.write("\n")
        } else {
            for item in page.items {
                Output.line(
                    "\(item.transactionId)  \(item.productId)  \(item.state.rawValue)  \(item.purchaseDate?.millisecondsSince1970 ?? 0)"
                )
            }
            if let next = page.nextCursor {
                Output.line("more: --cursor \(next)")
            }
        }
        terminate(.success)
    }

    static func stats(_ arguments: [String]) async throws {
        let parsed = try Arguments(arguments, options: CommandLedger.options, flags: ["json"])
        let store = try await CommandLedger.open(parsed).store
        let statistics = try await store.statistics()
        await store.close()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        Output.write(try encoder.encode(statistics))
        Output.write("\n")
        terminate(.success)
    }

    static func check(_ arguments: [String]) async throws {
        let parsed = try Arguments(arguments, options: CommandLedger.options, flags: ["json"])
        let store: any ListableEntitlementStore
        do {
            store = try await CommandLedger.open(parsed).store
        } catch let error as Arguments.UsageError {
            throw error
        } catch {
            let failure = IAPError.wrapping(error, as: .storageCorrupted, "the ledger cannot be opened")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
        let problems = try await LedgerInvariants.check(store)
        await store.close()
        guard problems.isEmpty else {
            for problem in problems.prefix(20) {
                Output.error("error: \(IAPError.Code.storageCorrupted.rawValue): \(problem)")
            }
            if problems.count > 20 {
                Output.error("... and \(problems.count - 20) more")
            }
            terminate(.rejected)
        }
        Output.line("ok: checksums and invariants hold")
        terminate(.success)
    }

    static func export(_ arguments: [String]) async throws {
        let parsed = try Arguments(arguments, options: CommandLedger.options, flags: [])
        let store = try await CommandLedger.open(parsed).store
        let entries = try await store.allEntries()
        await store.close()
        let encoder = AppStoreJSON.makeEncoder()
        for entry in entries {
            Output.write(try encoder.encode(entry))
            Output.write("\n")
        }
        terminate(.success)
    }
}

/// One line of `ingest` output, and whether the ledger itself failed.
struct IngestAnswer {
    let line: String
    let storeFailure: IAPError?
}

/// Appends each fulfillment call to a file, durably, for the crash test: which idempotency keys were handed
/// to the hook, and how often.
final class GrantLog: Sendable {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw Arguments.UsageError(message: "cannot open --grant-log \(path): \(String(cString: strerror(errno)))")
        }
    }

    func append(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw IAPError(.fulfillmentFailed, "the grant log could not be written")
        }
    }
}

/// The catalog used when none is configured: every product is a non-consumable that unlocks itself.
struct NonConsumableCatalog: ProductCatalog {
    func product(id: String) async throws -> CatalogProduct {
        CatalogProduct(productId: id, kind: .nonConsumable, entitlements: [id])
    }

    func allProducts() async throws -> [CatalogProduct] {
        []
    }
}
