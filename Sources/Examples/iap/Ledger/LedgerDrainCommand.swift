import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// `iap ledger drain`: one drain of the ledger's due work, for cron and for after a crash.
enum LedgerDrainCommand {
    static let spec = CommandSpec(
        name: "ledger drain",
        summary: "deliver what is due: retries, claims whose deliverer stopped, purchases parked for a known product",
        synopsis: [
            "\(CommandLedger.synopsis) [--catalog FILE] [--bundle-id ID]",
            "  \(GrantOptions.synopsis) [--wait SECONDS] [--json]",
        ],
        discussion: """
            Runs one drain of the ledger, the one 'iap serve' runs on its own every second and 'iap ledger
            ingest' runs before it reads: it delivers the purchases whose retry is due, those whose deliverer
            stopped between its claim and the outcome (a stale claim: a crash, a kill -9; 'iap ledger stats' counts
            them), and those parked for a product the catalog now names. Each is claimed by compare-and-set first,
            so a drain beside a running server or ingest never delivers anything twice.

            A claim that still holds is left alone: its deliverer may be at work on it now (another process on a
            shared ledger), and nothing tells a live deliverer from one that stopped until the claim expires (120
            seconds for a command on PostgreSQL, 30 for 'iap serve'). The command says how many hold and when the
            last one expires; --wait SECONDS waits for them, up to SECONDS (progress on standard error), and drains
            again when they expire, delivering what their deliverer left undelivered.

            Delivering needs GRANT, as for ingest: --grant-url URL --grant-secret-file FILE POSTs each grant and
            take-back to your backend, signed; --ledger-only makes the ledger the entitlement source. A grant that
            fails again goes back to the retry queue ('deferred'); the next drain takes it when it is due. The
            catalog is --catalog FILE, else the one saved with the ledger (not saved by this command).

            On a ledger of several apps ('iap serve --app'), give --bundle-id ID with that app's --catalog: only
            that app's purchases are delivered, each app's by its own catalog; without --bundle-id, a drain that
            finds due purchases of several apps refuses to start (exit 2) rather than deliver one app's purchase by
            another's catalog.

            Output: what the drain did (delivered, deferred, skipped: held by another deliverer or settled
            meanwhile), then what is left: claims that hold, stale claims, retries waiting, dead letters. --json
            prints one object: delivered, deferred, skipped, claimed, staleClaims, claimsHoldUntil (milliseconds
            since 1970, or null), pendingRetries, deadLetters.

            Exit status: 0 the drain ran (what it deferred waits in the retry queue), 1 the ledger failed, 2 usage
            error.
            """,
        options: DeliveringLedger.options + GrantOptions.options + [
            .value(
                "bundle-id",
                "ID",
                "on a ledger of several apps, deliver only this app's purchases (give its --catalog)"
            ),
            .value(
                "wait",
                "SECONDS",
                "wait up to SECONDS (at most 86400) for claims that hold to expire, then deliver what they left"
            ),
            .flag("json", "print one JSON object"),
        ],
        examples: [
            "iap ledger drain --data ./ledger --ledger-only",
            "iap ledger drain --database postgres://iap@127.0.0.1/shop --grant-url https://wallet.internal/iap "
                + "--grant-secret-file secret.txt --wait 180",
        ]
    )

    /// What the drains of one run did, added up.
    struct Totals {
        var delivered = 0
        var deferred = 0
        var skipped = 0

        mutating func add(_ report: DeliveryPipeline.DrainReport) {
            delivered += report.delivered
            deferred += report.deferred
            skipped += report.skipped
        }
    }

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        try parsed.noPositionals()
        let grantPath = try GrantOptions.parse(parsed)
        let grant = try GrantOptions.hook(grantPath)
        let wait = try parsed.value("wait").map { Int($0) } ?? 0
        guard let wait, (0...86_400).contains(wait) else {
            throw Arguments.UsageError(message: "--wait takes a number of seconds from 0 to 86400")
        }
        let bundleId = try CommandLedger.bundleId(parsed)
        let ledger = try await DeliveringLedger(parsed)
        let choice: CatalogChoice
        let clock = SystemClock()
        do {
            choice = try ledger.catalog(for: grantPath, command: "iap ledger drain")
            if bundleId == nil {
                try await refuseSeveralApps(ledger.store, at: clock.now)
            }
        } catch {
            await ledger.close()
            throw error
        }
        let pipeline = DeliveryPipeline(
            verifier: NothingToVerify(bundleIds: bundleId.map { [$0] }),
            catalog: choice.catalog,
            store: ledger.store,
            hook: grant.hook,
            clock: clock,
            retryPolicy: ledger.site.retryPolicy(for: .command),
            unknownProducts: choice.unknownProducts
        )
        var totals = Totals()
        let left: ClaimCounts
        let statistics: LedgerStatistics
        do {
            let released = await pipeline.releaseParked()
            if let error = released.errors.first {
                throw error
            }
            totals.add(released)
            try await drainAll(pipeline, into: &totals)
            let deadline = clock.now.addingTimeInterval(TimeInterval(wait))
            var claims = try await ledger.store.claims(at: clock.now)
            while claims.claimed > 0, let until = claims.claimsHoldUntil, clock.now < deadline {
                // A second past the expiry, so that the drain finds the claim expired by its own clock.
                try await waitForClaims(claims, until: min(until.addingTimeInterval(1), deadline), clock: clock)
                try await drainAll(pipeline, into: &totals)
                claims = try await ledger.store.claims(at: clock.now)
            }
            left = claims
            statistics = try await ledger.store.statistics()
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        try report(totals, left: left, statistics: statistics, json: parsed.has("json"), clock: clock)
        return .success
    }

    /// Drains due deliveries a batch at a time until a batch delivers nothing, with progress on standard error
    /// past the first batch.
    ///
    /// - Throws: The first failure of the store.
    static func drainAll(_ pipeline: DeliveryPipeline, into totals: inout Totals) async throws {
        var batches = 0
        while true {
            let report = await pipeline.drainDueRetries(limit: 1_000)
            if let error = report.errors.first {
                throw error
            }
            totals.add(report)
            batches += 1
            if report.delivered + report.deferred == 0 {
                return
            }
            if batches > 1 {
                Output.error("drained \(totals.delivered) delivered, \(totals.deferred) deferred so far")
            }
        }
    }

    /// Sleeps until `until`, saying every 5 seconds how many claims hold and when the last expires.
    static func waitForClaims(_ claims: ClaimCounts, until: Date, clock: SystemClock) async throws {
        while clock.now < until {
            let holdUntil = claims.claimsHoldUntil.map(TextDate.text) ?? "-"
            let seconds = Int((until.timeIntervalSince(clock.now)).rounded(.up))
            Output.error(
                "waiting for \(claims.claimed) claimed deliver\(claims.claimed == 1 ? "y" : "ies") (the last claim "
                    + "expires at \(holdUntil)); draining again in \(seconds) s"
            )
            try await Task.sleep(for: .seconds(min(5, max(0.05, until.timeIntervalSince(clock.now)))))
        }
    }

    /// Prints what the drain did and what is left, as text or as one JSON object.
    static func report(
        _ totals: Totals,
        left: ClaimCounts,
        statistics: LedgerStatistics,
        json: Bool,
        clock: SystemClock
    ) throws {
        if json {
            let object: [String: Any] = [
                "delivered": totals.delivered, "deferred": totals.deferred, "skipped": totals.skipped,
                "claimed": left.claimed, "staleClaims": left.staleClaims,
                "claimsHoldUntil": left.claimsHoldUntil.map { $0.millisecondsSince1970 as Any } ?? NSNull(),
                "pendingRetries": statistics.pendingRetries, "deadLetters": statistics.deadLetters,
            ]
            Output.write(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            Output.write("\n")
            return
        }
        func row(_ label: String, _ text: String) {
            Output.line("  " + label.padding(toLength: 17, withPad: " ", startingAt: 0) + text)
        }
        Output.line("drained")
        row("delivered", "\(totals.delivered)")
        row(
            "deferred",
            "\(totals.deferred)" + (totals.deferred > 0 ? " (the grant failed: back in the retry queue)" : "")
        )
        row("skipped", "\(totals.skipped)" + (totals.skipped > 0 ? " (held by another deliverer, or settled)" : ""))
        Output.line("left")
        if let until = left.claimsHoldUntil, left.claimed > 0 {
            let seconds = max(0, Int(until.timeIntervalSince(clock.now).rounded(.up)))
            row(
                "being delivered",
                "\(left.claimed) (claims hold until \(TextDate.text(until)), in \(seconds) s; a drain after then "
                    + "delivers what is still undelivered, or run with --wait)"
            )
        } else {
            row("being delivered", "0")
        }
        row("stale claims", "\(left.staleClaims)")
        row("pending retries", "\(statistics.pendingRetries)")
        row("dead letters", "\(statistics.deadLetters)")
    }
}

extension LedgerDrainCommand {
    /// Refuses a drain without `--bundle-id` whose due or parked purchases are of several apps: one catalog cannot
    /// say what each app's products are.
    static func refuseSeveralApps(_ store: some EntitlementStore, at now: Date) async throws {
        let due = try await store.dueDeliveries(at: now, limit: 1_000)
        let parked = try await store.parkedEntries(limit: 1_000)
        let apps = Set((due + parked).compactMap(\.transaction.bundleId))
        guard apps.count > 1 else { return }
        throw Arguments.UsageError(
            message: "the ledger holds due purchases of several apps (\(apps.sorted().joined(separator: ", "))): give "
                + "--bundle-id ID with that app's --catalog FILE, once per app"
        )
    }
}

/// The verifier of a command that verifies nothing: it settles what the ledger holds, so every signed input is refused.
struct NothingToVerify: Verifier {
    /// The apps whose entries the command delivers (`--bundle-id`), or `nil` for every app.
    var bundleIds: Set<String>?

    init(bundleIds: Set<String>? = nil) {
        self.bundleIds = bundleIds
    }

    private func refuse() -> IAPError {
        IAPError(.unsupportedOperation, "this command verifies no signed data: it delivers what the ledger holds")
    }

    func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload {
        throw refuse()
    }

    func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload {
        throw refuse()
    }

    func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        throw refuse()
    }

    func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
        throw refuse()
    }
}
