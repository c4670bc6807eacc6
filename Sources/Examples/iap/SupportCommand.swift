import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPStorageFile

/// `iap support`: tools for the support desk, over the App Store Server API and the ledger.
enum SupportCommand {
    static let lookupOrderSpec = CommandSpec(
        name: "support lookup-order",
        summary: "what the App Store and the ledger know of a customer's order id; --redeliver repairs",
        synopsis: [
            "ORDER_ID \(CommandLedger.synopsis)",
            "  [--catalog FILE] [--json] [--operator NAME] [--audit FILE | --no-audit-lookups]",
            "  [--redeliver [--user ID] \(GrantOptions.synopsis)]",
            "  --issuer-id ID --key-id ID --auth-key FILE.p8 --bundle-id ID",
            "  --environment LIST [--api-url URL]",
            "  [--root FILE.der]... [--app-apple-id N]",
        ],
        discussion: """
            Looks up the order id of a customer's App Store receipt email (Look Up Order ID), verifies every
            transaction, and shows per transaction the product, the purchase, expiry and revocation dates (ISO 8601
            UTC), Apple's state (active, expired, refunded, revoked), the owner (from the ledger, else the user
            bound to its appAccountToken) and whether the ledger delivered it. A lookup changes nothing in the
            ledger.

            Every lookup and redelivery is written to the support audit, which lives with the ledger
            (DIR/\(FileLedgerSite.supportAuditFileName), or the iap_support_audit table \
            of the --database schema): who asked
            (--operator, and the OS user the tool runs as), when, which order, and what was shown or delivered.
            Each entry carries the SHA-256 of the one before, the first the ledger's identity; 'iap support audit
            verify' checks the chain. The ledger keeps the audit's head too: an audit that does not reach it (its
            last entries, or all of it, deleted with its head) is refused before Apple is asked, until an operator
            runs 'iap support audit reseal'. --no-audit-lookups leaves a lookup out of it; a redelivery is always
            audited. An audit written with --audit FILE is not compared with the ledger's head.

            --redeliver delivers what the order holds and the ledger lacks to its owner (idempotent: a second run
            delivers nothing), and calls the webhook now for a delivery that waits for its retry or was
            dead-lettered (once the receiver is fixed), with an audit entry before and after that names what was granted and the path it
            took. It needs GRANT: --grant-url URL --grant-secret-file FILE POSTs each grant to your backend, signed;
            --ledger-only makes the ledger the entitlement source. --user names the customer: it gives them an order
            that waits for its owner (no appAccountToken bound to anyone), and is refused when the ledger or the
            token names another.

            Look Up Order ID exists in the Production App Store Server API only (sandbox purchases have no order
            id), so --environment must list Production; Production,Sandbox also accepts App Review's sandbox data.

            Exit status: 0 the order was found, every signed transaction verified and, with --redeliver, every
            transaction is delivered (or refunded) at the end; 1 an error, an unknown order id, signed data that did
            not verify, or a transaction still not delivered; 2 usage error.
            """,
        options: DeliveringLedger.options + [
            .flag("json", "print the report as one JSON object, dates in milliseconds since 1970"),
            .flag("redeliver", "deliver, through the ledger, what the order holds and the ledger lacks"),
            .value("operator", "NAME", "who asks, for the audit (default: the OS user the tool runs as)"),
            .value(
                "user",
                "ID",
                "the customer: gets what waits for an owner; refused if the ledger or token names another "
                    + "(with --redeliver)"
            ),
            .value(
                "audit",
                "FILE",
                "write a lookup's audit to FILE, anchored to the ledger, instead of the ledger's own "
                    + "(DIR/\(FileLedgerSite.supportAuditFileName) or the iap_support_audit table); not with --redeliver"
            ),
            .flag("no-audit-lookups", "write no audit entry for this lookup (not allowed with --redeliver)"),
        ] + GrantOptions.options
            + APISession.options.map {
                $0.name == "environment" ? APISession.environmentListOption : $0
            },
        examples: [
            "iap support lookup-order MH43IXG3WA --data ./ledger --operator agent-7 --issuer-id ISSUER --key-id KEY "
                + "--auth-key key.p8 --bundle-id com.example.app --environment Production --app-apple-id 1234567890",
            "iap support lookup-order MH43IXG3WA --data ./ledger --redeliver --user alice --ledger-only "
                + "--operator agent-7 --issuer-id ISSUER --key-id KEY --auth-key key.p8 --bundle-id com.example.app "
                + "--environment Production,Sandbox --app-apple-id 1234567890",
        ]
    )

    static let auditVerifySpec = CommandSpec(
        name: "support audit verify",
        summary: "check the support audit's chain: exit 1 naming every entry that is broken, missing or edited",
        synopsis: ["(LEDGER | \(CommandLedger.synopsis.dropFirst()) [--audit FILE] [--json]"],
        discussion: """
            Reads the support audit of a ledger — DIR/\(FileLedgerSite.supportAuditFileName) and its head \
            DIR/\(FileLedgerSite.supportAuditFileName).head
            for a file ledger (LEDGER a directory), the iap_support_audit table and its head for a PostgreSQL ledger
            (LEDGER a postgres:// URL), or FILE with --audit — and checks that the first entry starts from the
            ledger's identity, that each entry carries the SHA-256 of the one before and its own number, that the
            log reaches the head recorded beside it, and that it reaches the head the ledger keeps (a log deleted or
            cut together with its head: 'the ledger records N entries with head H, the log holds M'). It writes
            nothing and takes no lock, so it may run while another process holds the ledger. Prints 'ok: N entries,
            head HASH' (keep the hash elsewhere to make even a rewrite of log, head and ledger evident), or each
            problem as 'error: storageCorrupted: entry N (line N): what is wrong' on standard error. With --json,
            prints {"ok", "entries", "head", "recordedHead", "ledgerHead", "problems", "notes"}.

            Exit status: 0 the chain is intact, 1 it is not (or the ledger cannot be read), 2 usage error.
            """,
        options: CommandLedger.options + [
            .value("audit", "FILE", "check FILE, anchored to the ledger, instead of the ledger's own audit"),
            .flag("json", "print one JSON object {\"ok\", \"entries\", \"head\", \"problems\", \"notes\"}"),
        ],
        examples: ["iap support audit verify ./ledger", "iap support audit verify --data ./ledger --json"]
    )

    static let auditResealSpec = CommandSpec(
        name: "support audit reseal",
        summary: "let support write to an audit that does not match the ledger's head again, with an entry saying why",
        synopsis: [
            "(LEDGER | \(CommandLedger.synopsis.dropFirst()) --reason TEXT [--operator NAME] [--json] [--events FILE]"
        ],
        discussion: """
            The ledger keeps its support audit's head (how many entries, the last one's SHA-256) itself: in its
            journal and snapshots (a file ledger) or its iap_ledger_identity row (a PostgreSQL ledger). An audit
            that does not reach that head — its last entries, or the whole log, deleted along with the head beside
            it; a log without its head; an edited entry — is refused: 'iap serve' and 'iap support lookup-order'
            refuse every support action (purchases go on), until an operator looks at it ('iap support audit
            verify'), keeps the log as evidence, and runs this command.

            It appends an 'audit.reseal' entry after what the log holds now — with --operator (default: the OS user),
            --reason, the ledger's head and the log's head as found, and every problem found — and sets the head
            beside the log and the ledger's head to it. Breaks before the entry stay for 'verify' to name: move a log
            with edited entries aside first (DIR/\(FileLedgerSite.supportAuditFileName) and its .head) \
            to start a new one from the
            reseal entry. An audit that matches the ledger's head is left as it is ('ok: nothing to reseal').

            A file ledger is opened for writing: stop 'iap serve' on it first. A PostgreSQL ledger may be resealed
            while servers run; they take support actions again at the next one. --events FILE appends the event
            'support.audit' (outcome resealed, auditHead the new head), as every support event carries the head.

            Exit status: 0 resealed, or nothing to reseal; 1 an error; 2 usage error (no --reason).
            """,
        options: CommandLedger.options + [
            .value("reason", "TEXT", "why the audit is resealed, for the reseal entry (required)"),
            .value("operator", "NAME", "who reseals, for the reseal entry (default: the OS user the tool runs as)"),
            .flag("json", "print one JSON object {\"resealed\", \"entries\", \"head\", ...}"),
            CommandEvents.option,
        ],
        examples: [
            "iap support audit reseal ./ledger --operator ops-1 --reason \"INC-42: \(FileLedgerSite.supportAuditFileName) lost in a disk "
                + "swap\""
        ]
    )

    static let auditSpec = CommandSpec(
        name: "support audit",
        summary: "the support audit: verify its hash chain, reseal it after tampering was looked at",
        discussion: "The support audit, kept with the ledger: every lookup and redelivery, chained by SHA-256.",
        subcommands: [auditVerifySpec, auditResealSpec],
        examples: auditVerifySpec.examples + auditResealSpec.examples
    )

    static let spec = CommandSpec(
        name: "support",
        summary: "support desk tools: look up a customer's order id, redeliver what it lacks, verify the audit",
        discussion: "Tools for the support desk, over the App Store Server API and the ledger, each audited.",
        subcommands: [lookupOrderSpec, auditSpec],
        examples: lookupOrderSpec.examples + auditVerifySpec.examples.prefix(1)
    )

    static func run(_ arguments: [String]) async -> Never {
        let (command, rest) = spec.subcommand(arguments)
        if command.word == "audit" {
            let (subcommand, subcommandArguments) = auditSpec.subcommand(rest)
            if subcommand.word == "reseal" {
                await SupportAuditCommand.runReseal(subcommandArguments, spec: subcommand)
            }
            await SupportAuditCommand.run(subcommandArguments, spec: subcommand)
        }
        let parsed = command.parse(rest)
        let orderId: String
        let session: APISession
        var grant: GrantOptions.Path?
        do throws(Arguments.UsageError) {
            guard parsed.positionals.count == 1, let first = parsed.positionals.first, !first.isEmpty else {
                throw Arguments.UsageError(message: "lookup-order takes exactly one ORDER_ID")
            }
            orderId = first
            if parsed.has("redeliver") {
                grant = try GrantOptions.parse(parsed)
            } else {
                for name in ["user"] where parsed.options[name] != nil {
                    throw Arguments.UsageError(message: "--\(name) applies only with --redeliver")
                }
                try GrantOptions.refuse(parsed, without: "--redeliver")
            }
            if parsed.has("redeliver"), parsed.options["audit"] != nil {
                // Money moves only under the ledger's own audit, whose head the ledger keeps and checks.
                throw Arguments.UsageError(
                    message: "a redelivery is audited in the ledger's own audit: drop --audit FILE"
                )
            }
            if parsed.has("no-audit-lookups") {
                if parsed.has("redeliver") {
                    throw Arguments.UsageError(message: "a redelivery is always audited: drop --no-audit-lookups")
                }
                for name in ["operator", "audit"] where parsed.options[name] != nil {
                    throw Arguments.UsageError(message: "--\(name) names an audit that --no-audit-lookups leaves out")
                }
            }
            _ = try parsed.userId("user")
            if try parsed.value("operator")?.isEmpty == true {
                throw Arguments.UsageError(message: "--operator needs a name")
            }
            do {
                _ = try CommandLedger.location(parsed)
            } catch let error as Arguments.UsageError {
                throw error
            } catch {
                throw Arguments.UsageError(message: "\(error)")
            }
            session = try APISession(parsed, verifying: true, environmentList: true)
            guard session.clients.environments.contains(.production) else {
                throw Arguments.UsageError(
                    message: "--environment must list Production: Look Up Order ID exists in the Production App Store "
                        + "Server API only (sandbox purchases have no order id); Production,Sandbox also accepts App "
                        + "Review's sandbox data"
                )
            }
        } catch {
            command.fail(error)
        }
        do {
            let report = try await lookUp(orderId, parsed, session, grant: grant)
            try print(report, json: parsed.has("json"))
            guard report.found else {
                Output.error("error: notFound: the App Store knows no order '\(orderId)' of this app")
                terminate(.rejected)
            }
            var failed = false
            for rejected in report.rejectedSignatures {
                Output.error("error: a signed transaction of the order was rejected: \(rejected)")
                failed = true
            }
            for item in report.transactions where report.redelivered {
                if item.redelivery == "awaitingOwner" {
                    // Not a failure: an order whose token nobody claimed is never given to anyone by guess.
                    Output.error(
                        "note: \(item.transactionId) waits for its owner: no user is bound to its appAccountToken; it "
                            + "is delivered when the customer's app submits it, or name the customer with --user ID"
                    )
                    continue
                }
                if let error = item.redeliveryError {
                    Output.error("error: \(item.transactionId): \(error)")
                    failed = true
                } else if let problem = undelivered(item) {
                    Output.error("error: \(item.transactionId) is not delivered: \(problem)")
                    failed = true
                }
            }
            terminate(failed ? .rejected : .success)
        } catch let error as Arguments.UsageError {
            command.fail(error)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the support command failed")
            var line = "error: \(failure.code.rawValue): \(failure.message)"
            if let status = failure.httpStatus {
                line += " (HTTP \(status))"
            }
            Output.error(line)
            terminate(.rejected)
        }
    }

    /// Why a redelivered transaction is not delivered at the end, or `nil` when it is (or was refunded and taken
    /// back).
    static func undelivered(_ item: OrderLookupItem) -> String? {
        switch item.redelivery {
        case "delivered", "alreadyDelivered", "revoked": nil
        case "awaitingOwner":
            "it waits for its owner (no user is bound to its appAccountToken): name the customer with --user ID"
        case "pending": "another deliverer holds it; run again shortly"
        case "deferred": "the grant failed and waits for a retry"
        default: "the redelivery ended '\(item.redelivery ?? "-")'"
        }
    }

    /// Opens the ledger and its audit, looks the order up (audited unless asked not to), and redelivers when asked.
    static func lookUp(
        _ orderId: String,
        _ parsed: Arguments,
        _ session: APISession,
        grant: GrantOptions.Path?
    ) async throws -> OrderLookupReport {
        guard let verifier = session.verifier else {
            throw IAPError(.internalError, "no verifier was configured")
        }
        let fulfillment = try grant.map(GrantOptions.hook)
        let ledger = try await DeliveringLedger(parsed)
        let choice: CatalogChoice
        do {
            choice = try ledger.catalog(for: grant, command: "iap support lookup-order --redeliver")
        } catch {
            await ledger.close()
            throw error
        }
        let redeliver = parsed.has("redeliver")
        let audited = redeliver || !parsed.has("no-audit-lookups")
        let audit: SupportAuditCommand.OpenLog?
        do {
            audit =
                audited ? try await SupportAuditCommand.open(ledger.site, auditPath: try parsed.value("audit")) : nil
        } catch {
            await ledger.close()
            throw error
        }
        // A lookup delivers nothing: its pipeline is never asked to, and has no hook to call.
        let hook: any FulfillmentHook =
            fulfillment?.hook
            ?? ClosureFulfillmentHook(
                grant: { _ in throw IAPError(.internalError, "a lookup does not deliver") },
                revoke: { _ in throw IAPError(.internalError, "a lookup does not deliver") }
            )
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: choice.catalog,
            store: ledger.store,
            hook: hook,
            retryPolicy: ledger.site.retryPolicy(for: .command),
            // An order whose appAccountToken nobody claimed waits for its owner unless --user names them.
            unclaimedTokenPolicy: .awaitOwner,
            unknownProducts: choice.unknownProducts
        )
        // Without an audit (--no-audit-lookups) the log is never written to: lookUpWithoutAudit is called.
        let auditLog: any SupportAuditLog = audit?.log ?? DisabledSupportAuditLog()
        let tool = OrderLookup(
            clients: session.clients,
            pipeline: pipeline,
            auditLog: auditLog,
            fulfillment: fulfillment?.description
        )
        do {
            let actor = try parsed.value("operator") ?? SupportAuditChain.osUser
            let report: OrderLookupReport
            if redeliver {
                report = try await tool.redeliver(orderId: orderId, actor: actor, userId: try parsed.value("user"))
            } else if audited {
                report = try await tool.lookUp(orderId: orderId, actor: actor)
            } else {
                report = try await tool.lookUpWithoutAudit(orderId: orderId)
            }
            await audit?.close()
            await ledger.close()
            return report
        } catch {
            await audit?.close()
            await ledger.close()
            throw error
        }
    }

    // MARK: - Output

    static func print(_ report: OrderLookupReport, json: Bool) throws {
        if json {
            Output.write(try AppStoreJSON.makeEncoder().encode(report))
            Output.write("\n")
            return
        }
        guard report.found else {
            Output.line("order \(report.orderId): not found (invalid, or no in-app purchase of this app)")
            return
        }
        let count = report.transactions.count
        Output.line("order \(report.orderId): \(count) transaction\(count == 1 ? "" : "s")")
        var rows = [
            ["TRANSACTION", "PRODUCT", "STATE", "PURCHASED", "EXPIRES", "REVOKED", "OWNER", "DELIVERED"]
        ]
        if report.redelivered {
            rows[0].append("REDELIVERY")
        }
        for item in report.transactions {
            var owner = item.owner ?? "-"
            if let source = item.ownerSource {
                owner += source == .ledger ? " (ledger)" : " (token)"
            }
            var row = [
                item.transactionId, item.productId ?? "-", item.state.rawValue, date(item.purchaseDate),
                date(item.expiresDate), date(item.revocationDate), owner,
                item.delivered ? "yes" : (item.ledgerState.map { "no (\($0.rawValue))" } ?? "no (not in ledger)"),
            ]
            if report.redelivered {
                row.append(item.redelivery ?? "-")
            }
            rows.append(row)
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            Output.line(cells.joined(separator: "  "))
        }
        for rejected in report.rejectedSignatures {
            Output.line("rejected: \(rejected)")
        }
    }

    private static func date(_ date: Date?) -> String {
        TextDate.text(date)
    }
}
