import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI
import IAPStorageFile

/// `iap reconcile`: the reconciler as a command for cron.
enum ReconcileCommand {
    static let spec = CommandSpec(
        name: "reconcile",
        summary: "repair the ledger from the App Store: lost orders, missed refunds, lost renewal notifications",
        synopsis: [
            "\(CommandLedger.synopsis) --issuer-id ID --key-id ID --auth-key FILE.p8 --bundle-id ID",
            "  [--environment LIST] [--app-apple-id N] [--api-url URL] [--root FILE.der]... [--catalog FILE]",
            "  (--user ID | --all | --subscriptions) \(GrantOptions.synopsis) [--json]",
            "  [--checkpoints FILE] [--alarm-threshold N] [--requests-per-second N] [--events FILE]",
        ],
        discussion: """
            Compares Apple's record of purchases with the ledger and repairs the ledger: delivers what Apple sold
            and the server never heard of (a lost order, a lost renewal), takes back what Apple refunded and the
            server missed, and records the newest renewal state of each subscription (Get All Subscription
            Statuses), so that a lost DID_FAIL_TO_RENEW does not end a subscriber's access in the billing grace
            period. Each customer is asked of the App Store Server API of its own environment: --environment
            Production,Sandbox on a production server that also takes App Review's sandbox purchases.

            --user ID reconciles one customer. --all visits every customer the ledger knows (transaction and refund
            histories, from the checkpoints of the last run) plus the statuses of every subscription it believes
            live (active, in grace period or billing retry, or due to renew): run it nightly. --subscriptions asks
            only those statuses, one request per Apple account: cheap enough to run hourly.

            Delivering needs GRANT: --grant-url URL --grant-secret-file FILE POSTs each grant and take-back to your
            backend, signed (it needs a catalog: --catalog FILE, or the one saved with the ledger); --ledger-only
            makes the ledger the entitlement source. A purchase of a product the catalog does not know is recorded
            and parked until the catalog names it; one whose appAccountToken no user claimed is recorded and waits
            for its owner (with --user ID, it is that customer's). Progress and alarms go to
            standard error; an ALARM line names each thing the ledger had missed. The summary goes to standard
            output, or with --json as one object: families, transactions, deliveredNow, takenBackNow,
            renewalInfosUpdated, failed, alarms.

            On a ledger of several apps (iap serve --app), only the purchase families of --bundle-id are visited;
            the others are left alone with a note on standard error: reconcile each app with its own --bundle-id.

            Checkpoints are kept in DIR/\(FileLedgerSite.reconciliationCheckpointsFileName) for a --data ledger, \
            in the ledger's
            schema (shared by every instance of a fleet) for a --database ledger, or in --checkpoints FILE; without
            them every history is read whole.

            Exit status: 0 nothing failed (repairs and alarms included), 1 something failed (a transaction that
            could not be settled, signed data that did not verify, a customer the API refused), 2 usage error.
            """,
        options: DeliveringLedger.options
            + APISession.options.map { option in
                switch option.name {
                case "environment":
                    .value(
                        "environment",
                        "LIST",
                        "Production (default), Sandbox or LocalTesting, or a comma-separated list such as "
                            + "Production,Sandbox: one API client each, and signed data of each is accepted"
                    )
                default:
                    option
                }
            } + [
                .value("user", "ID", "reconcile this customer"),
                .flag("all", "reconcile every customer of the ledger, and every subscription it believes live"),
                .flag("subscriptions", "ask the statuses of every subscription the ledger believes live, only"),
            ] + GrantOptions.options + [
                .flag("json", "print the summary as one JSON object"),
                .value(
                    "checkpoints",
                    "FILE",
                    "keep each customer's history revisions in FILE instead of beside the ledger"
                ),
                .value("alarm-threshold", "N", "alarm when a customer's ledger had missed more than N things (0)"),
                .value("requests-per-second", "N", "the most App Store Server API requests per second (10)"),
                CommandEvents.option,
            ],
        examples: [
            "iap reconcile --data ./ledger --issuer-id ISSUER --key-id KEY --auth-key key.p8 --bundle-id "
                + "com.example.app --environment Production,Sandbox --app-apple-id 1234567890 --all --ledger-only",
            "iap reconcile --data ./ledger --issuer-id ISSUER --key-id KEY --auth-key key.p8 --bundle-id "
                + "com.example.emulated --environment Sandbox --api-url http://127.0.0.1:8080 --root root.der "
                + "--user alice --grant-url http://127.0.0.1:9000/iap --grant-secret-file secret.txt --json",
        ]
    )

    /// What to visit.
    enum Scope {
        case user(String)
        case all
        case subscriptions
    }

    /// The settings the options make.
    struct Settings {
        var scope: Scope
        var grant: GrantOptions.Path
        var session: APISession
        var alarmThreshold = 0
        var requestsPerSecond = 10.0
        var events: any EventSink

        init(_ parsed: Arguments) throws(Arguments.UsageError) {
            try parsed.noPositionals()
            let user = try parsed.userId("user")
            let chosen = [user != nil, parsed.has("all"), parsed.has("subscriptions")].filter { $0 }.count
            guard chosen == 1 else {
                throw .init(message: "give exactly one of --user ID, --all or --subscriptions")
            }
            if let user {
                scope = .user(user)
            } else {
                scope = parsed.has("all") ? .all : .subscriptions
            }
            grant = try GrantOptions.parse(parsed)
            if let text = try parsed.value("alarm-threshold") {
                guard let value = Int(text), value >= 0 else {
                    throw .init(message: "--alarm-threshold takes a number, 0 or more")
                }
                alarmThreshold = value
            }
            if let text = try parsed.value("requests-per-second") {
                guard let value = Double(text), value > 0, value.isFinite else {
                    throw .init(message: "--requests-per-second takes a number above 0")
                }
                requestsPerSecond = value
            }
            // Location errors first: a command without a ledger says so before anything else is opened.
            do {
                _ = try CommandLedger.location(parsed)
            } catch let error as Arguments.UsageError {
                throw error
            } catch {
                throw .init(message: "\(error)")
            }
            session = try APISession(
                parsed,
                verifying: true,
                environmentList: true,
                baseURLOption: "api-url",
                defaultEnvironment: "Production"
            )
            events = try CommandEvents.sink(parsed)
        }
    }

    /// The summary, as `--json` prints it.
    struct Summary: Encodable {
        var families = 0
        var transactions = 0
        var deliveredNow = 0
        var takenBackNow = 0
        var renewalInfosUpdated = 0
        var failed = 0
        var alarms = 0
    }

    static func run(_ arguments: [String]) async -> Never {
        let parsed = spec.parse(arguments)
        let settings: Settings
        do {
            settings = try Settings(parsed)
        } catch {
            spec.fail(error)
        }
        do {
            let summary = try await reconcile(settings, parsed)
            if parsed.has("json") {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                Output.write(try encoder.encode(summary))
                Output.write("\n")
            } else {
                func count(_ number: Int, _ noun: String, _ plural: String? = nil) -> String {
                    "\(number) " + (number == 1 ? noun : plural ?? noun + "s")
                }
                Output.line(
                    count(summary.families, "purchase family", "purchase families") + ", "
                        + count(summary.transactions, "transaction") + " from Apple: "
                        + "\(summary.deliveredNow) delivered now, \(summary.takenBackNow) taken back now, "
                        + count(summary.renewalInfosUpdated, "renewal state") + " updated, "
                        + "\(summary.failed) failed, " + count(summary.alarms, "alarm")
                )
            }
            terminate(summary.failed > 0 ? .rejected : .success)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "the reconciliation failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    /// Opens the ledger and the checkpoints, runs the reconciliation, and reports what failed on standard error.
    static func reconcile(_ settings: Settings, _ parsed: Arguments) async throws -> Summary {
        guard let verifier = settings.session.verifier else {
            throw IAPError(.internalError, "no verifier was configured")
        }
        let grant = try GrantOptions.hook(settings.grant)
        let ledger = try await DeliveringLedger(parsed)
        let choice: CatalogChoice
        do {
            choice = try ledger.catalog(for: settings.grant, command: "iap reconcile")
        } catch {
            await ledger.close()
            throw error
        }
        // --checkpoints FILE, else the ledger's own (beside a file ledger, in a database ledger's schema).
        var checkpointFile: FileReconciliationCheckpointStore?
        let checkpoints: any ReconciliationCheckpointStore
        do {
            if let path = try parsed.value("checkpoints") {
                let file = try FileReconciliationCheckpointStore(path: path)
                checkpointFile = file
                checkpoints = file
            } else {
                checkpoints = try await ledger.site.reconciliationCheckpoints()
            }
        } catch {
            await ledger.close()
            throw error
        }
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: choice.catalog,
            store: ledger.store,
            hook: grant.hook,
            retryPolicy: ledger.site.retryPolicy(for: .command),
            // A purchase whose appAccountToken nobody claimed waits for its owner: it is never given to its token.
            unclaimedTokenPolicy: .awaitOwner,
            unknownProducts: choice.unknownProducts,
            events: settings.events
        )
        let alarms = AlarmCounter()
        var configuration = Reconciler.Configuration(
            alarmThreshold: settings.alarmThreshold,
            requestsPerSecond: settings.requestsPerSecond
        )
        // On a ledger of several apps, only this app's purchases: the others are known to their own app's API only.
        configuration.apps = try parsed.value("bundle-id").map { [$0] }
        let reconciler = Reconciler(
            clients: settings.session.clients,
            pipeline: pipeline,
            checkpoints: checkpoints,
            configuration: configuration,
            alarm: { alarm in
                alarms.add()
                for discrepancy in alarm.discrepancies {
                    Output.error("ALARM: \(alarm.customer): \(discrepancy)")
                }
            }
        )
        do {
            let summary = try await run(reconciler, settings.scope, ledger: ledger, alarms: alarms)
            await checkpointFile?.close()
            await ledger.close()
            return summary
        } catch {
            await checkpointFile?.close()
            await ledger.close()
            throw error
        }
    }

    private static func run(
        _ reconciler: Reconciler,
        _ scope: Scope,
        ledger: DeliveringLedger,
        alarms: AlarmCounter
    ) async throws -> Summary {
        switch scope {
        case .user(let user):
            let families = Set(try await ledger.store.allHistory(userId: user).map(\.originalTransactionId)).count
            Output.error("reconcile: \(user), \(families) purchase famil\(families == 1 ? "y" : "ies")")
            var summary = Summary(families: families)
            do {
                let report = try await reconciler.reconcile(userId: user)
                summary.transactions = report.appleTransactions.count
                summary.deliveredNow = report.deliveredNow.count
                summary.takenBackNow = report.revokedNow.count
                summary.renewalInfosUpdated = report.renewalInfosUpdated.count
                summary.failed = report.stillFailing.count + report.rejectedSignatures.count
                report.stillFailing.forEach(describe)
                report.rejectedSignatures.forEach(describe)
            } catch {
                let failure = IAPError.wrapping(error, as: .internalError, "the reconciliation failed")
                Output.error("error: \(user): \(failure.code.rawValue): \(failure.message)")
                summary.failed = 1
            }
            summary.alarms = alarms.count
            return summary
        case .all, .subscriptions:
            let progress: @Sendable (ReconciliationProgress) async -> Void = { step in
                // At most about a hundred lines, and always the last.
                let every = max(1, step.total / 100)
                if step.done % every == 0 || step.done == step.total {
                    Output.error("reconcile: \(step.done)/\(step.total) purchase families")
                }
            }
            // The walk counts the families first (a page at a time): on a large ledger that takes a while.
            Output.error("reconcile: counting the ledger's purchase families")
            let walk: LedgerReconciliationSummary
            if case .all = scope {
                walk = try await reconciler.reconcileLedger(progress: progress)
            } else {
                walk = try await reconciler.reconcileSubscriptions(progress: progress)
            }
            walk.stillFailing.forEach(describe)
            for (family, error) in walk.failedCustomers.sorted(by: { $0.key < $1.key }) {
                Output.error("error: purchase family \(family): \(error.code.rawValue): \(error.message)")
            }
            if walk.rejectedSignatures > 0 {
                Output.error("error: \(walk.rejectedSignatures) signed data from Apple did not verify")
            }
            if walk.otherApps > 0 {
                Output.error(
                    "note: \(walk.otherApps) purchase famil\(walk.otherApps == 1 ? "y" : "ies") of other apps than "
                        + "--bundle-id left alone: reconcile each app of the ledger with its own --bundle-id"
                )
            }
            return Summary(
                families: walk.families,
                transactions: walk.appleTransactions,
                deliveredNow: walk.deliveredNow,
                takenBackNow: walk.revokedNow,
                renewalInfosUpdated: walk.renewalInfosUpdated,
                failed: walk.failed,
                alarms: walk.alarms
            )
        }
    }

    private static func describe(_ failure: ReconciliationReport.Failure) {
        Output.error("error: \(failure.transactionId): \(failure.error.code.rawValue): \(failure.error.message)")
    }

    private static func describe(_ rejection: ReconciliationReport.Rejection) {
        Output.error("error: signed data from Apple did not verify: \(rejection.error.code.rawValue)")
    }
}

/// Counts the alarms a run raised.
private final class AlarmCounter: Sendable {
    private let counted = LockedValue(0)

    func add() {
        counted.withLock { $0 += 1 }
    }

    var count: Int {
        counted.withLock { $0 }
    }
}
