import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPStorageFile

/// `iap ledger ingest`: verifies signed App Store data line by line and records it in the ledger, delivering each
/// purchase exactly once.
enum LedgerIngestCommand {
    static let spec = CommandSpec(
        name: "ledger ingest",
        summary: "verify signed data line by line and record it, delivering each purchase once",
        synopsis: [
            "\(CommandLedger.synopsis) [--catalog FILE]",
            "  [--root FILE.der]... [--bundle-id ID] [--environment LIST] [--app-apple-id N] [--strict-x509]",
            "  [--user ID | --token-is-user] [--compaction-threshold BYTES] [--events FILE] [--window N]",
            "  \(GrantOptions.synopsis) [FILE|-]",
        ],
        discussion: """
            Reads FILE (or standard input) line by line as it arrives: a signed transaction, a signed renewal info,
            or a notification's signedPayload (alone or as its {"signedPayload": ...} body). Each line is verified
            and recorded; a purchase is delivered once, whatever repeats it. Up to --window lines (default 64) are
            in flight at once, so the ledger commits their writes together; lines about the same purchase (the
            same original transaction id, a notification's included) are still recorded in input order, lines
            about different purchases in the order they complete (the order ledger history lists). Each line is
            answered in input order, once it and every line before it are durable: 'ACK
            <transactionId|notificationUUID|-> <outcome>' (outcomes: delivered, alreadyDelivered, pending,
            awaitingOwner, deferred, revoked, processed, duplicate, unowned, stored, stale, verified); a rejected
            line prints 'REJECT <line-number> <error-code>' and ingestion goes on. A pipe is answered as its lines
            arrive. When the ledger fails after a transaction was recorded (a full disk after its insert was
            durable), the line prints 'ACK <transactionId> <state>' (pending, retrying, ...: the state it is in; a
            later run delivers it) and ingestion stops: nothing after that line is printed, although lines after
            it that were in flight may be recorded (a rerun over the same input acknowledges them). --window 1
            reads a line only once the one before it is answered, and records in input order. Before it reads, it
            delivers what an earlier run left due for a retry or claimed and never settled (its claim expired), and
            what it parked for a product the catalog now names. A new ledger is created.

            On a shared ledger (PostgreSQL), a purchase another process has claimed is answered 'pending' while
            the claim holds (120 seconds): that process may be delivering it now. This command does not wait for
            it: when it ends it says on standard error how many such claims hold and when the last expires, and
            'iap ledger drain' after then (or 'iap ledger drain --wait SECONDS' at once) delivers what their
            deliverer left.

            Whose a purchase is: --user ID's; without it, the user its appAccountToken is bound to (by the app's
            submission to 'iap serve', or POST /iap/v1/users/{userId}/account-tokens); a purchase whose token
            nobody claimed is recorded and waits for its owner ('awaitingOwner': nothing is granted until the user
            presents it). --token-is-user is for a ledger whose user ids are the app account tokens themselves:
            such a purchase then belongs to its token.

            No purchase is granted by guess: with --grant-url the command needs a catalog (--catalog FILE, saved
            with the ledger, or the one saved before) and refuses to start without one; a purchase of a product
            the catalog does not know is recorded and parked ('ACK <id> deferred', state unknownProduct) until a
            run with a catalog that names it. --ledger-only without any catalog records and delivers each purchase
            as its signed transaction's type says, with a note on standard error.

            Delivering needs GRANT: --grant-url URL --grant-secret-file FILE POSTs each grant and take-back to your
            backend, signed (a failed POST is retried from the ledger's retry queue, by this command's next run);
            --ledger-only makes the ledger the entitlement source, so recording is delivering. --events FILE appends
            one JSON object per line for each line ingested (time, event, userId, productId, transactionId,
            originalTransactionId, environment, outcome, errorCode, durationMs).

            Exit status: 0 every line was acknowledged, 1 a line was rejected (every other line is still
            processed) or the ledger itself failed (then it stops), 2 usage error.
            """,
        options: CommandLedger.options + [
            .value("catalog", "FILE", "the product catalog (swift-iap JSON or .storekit); saved with the ledger")
        ] + VerifyCommand.verifierOptions + [
            .value(
                "user",
                "ID",
                "deliver every purchase to this user (default: the user bound to its appAccountToken; a purchase whose "
                    + "token nobody claimed waits for its owner)"
            ),
            .flag(
                "token-is-user",
                "the app account token is the user id (a ledger whose users are their tokens): a purchase whose token "
                    + "nobody claimed belongs to its token"
            ),
            .value("compaction-threshold", "BYTES", "compact the file ledger's log past BYTES (>= 4096; --data only)"),
            CommandEvents.option,
            .value("window", "N", "lines in flight at once, 1 to 1024 (default 64); 1 ingests one line at a time"),
        ] + GrantOptions.options,
        examples: [
            "iap testdata transactions --count 4 --root-out root.der --catalog-out catalog.json > tx.jws",
            "iap ledger ingest --data ./ledger --catalog catalog.json --root root.der --ledger-only tx.jws",
            "iap ledger ingest --data ./ledger --root root.der --grant-url https://wallet.internal/iap "
                + "--grant-secret-file secret.txt tx.jws",
        ]
    )

    static func run(_ arguments: [String]) async throws -> ExitCode {
        let parsed = spec.parse(arguments)
        if case .database = try CommandLedger.location(parsed), parsed.options["compaction-threshold"] != nil {
            throw Arguments.UsageError(message: "--compaction-threshold applies to a --data ledger only")
        }
        let settings = try VerifyCommand.Settings(parsed)
        let user = try parsed.userId("user")
        if user != nil, parsed.has("token-is-user") {
            throw Arguments.UsageError(message: "give --user or --token-is-user, not both")
        }
        var options = FileEntitlementStore.Options()
        if let threshold = try parsed.value("compaction-threshold") {
            guard let bytes = Int(threshold), bytes >= 4_096 else {
                throw Arguments.UsageError(message: "--compaction-threshold takes a number of bytes, at least 4096")
            }
            options.compactionThreshold = bytes
        }
        let grantPath = try GrantOptions.parse(parsed)
        let grant = try GrantOptions.hook(grantPath)
        let events = try CommandEvents.sink(parsed)
        let window = try parsed.value("window").map { Int($0) } ?? 64
        guard let window, (1...1_024).contains(window) else {
            throw Arguments.UsageError(message: "--window takes a number of lines from 1 to 1024")
        }
        let input = try parsed.singlePositional()
        let descriptor = try Input.descriptor(input)
        let verifier = try AppStoreSignedDataVerifier(configuration: settings.configuration)
        for note in settings.skippedChecks {
            Output.error("note: \(note)")
        }
        // Take the ledger first: a second process must not replace the catalog the first one works with.
        let ledger = try await CommandLedger.open(parsed, access: .create, options: options)
        let store = ledger.store
        let choice: CatalogChoice
        do {
            choice = try CatalogChoice.choose(
                try await ledger.catalog(parsed, save: true),
                grant: grantPath,
                command: "iap ledger ingest"
            )
        } catch {
            await ledger.close()
            throw error
        }
        // The ledger's claim policy for a command (see FileLedgerSite and PostgresLedgerSite).
        // Without --user, a transaction belongs to the user bound to its appAccountToken, else waits for its owner
        // (or, with --token-is-user, belongs to its token).
        let pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: choice.catalog,
            store: store,
            hook: grant.hook,
            retryPolicy: ledger.retryPolicy(for: .command),
            unclaimedTokenPolicy: parsed.has("token-is-user") ? .tokenIsUser : .awaitOwner,
            unknownProducts: choice.unknownProducts,
            events: events
        )
        let processor = NotificationProcessor(pipeline: pipeline)
        let released = await pipeline.releaseParked()
        if let error = released.errors.first {
            await ledger.close()
            throw error
        }
        do {
            var drained = LedgerDrainCommand.Totals()
            try await LedgerDrainCommand.drainAll(pipeline, into: &drained)
        } catch {
            await ledger.close()
            throw error
        }

        let summary = await LedgerIngestWindow(window: window).run(descriptor: descriptor, events: events) {
            token,
            number in
            await ingestLine(
                token,
                number: number,
                verifier: verifier,
                pipeline: pipeline,
                processor: processor,
                store: store,
                user: user
            )
        }
        if let failure = summary.storeFailure {
            // The ledger itself is failing: stop rather than reject every following line.
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            await ledger.close()
            return .rejected
        }
        if descriptor != 0 {
            close(descriptor)
        }
        await noteClaims(in: store)
        await ledger.close()
        if summary.rejected > 0 {
            let count = summary.answered
            Output.error("error: \(summary.rejected) of \(count) line\(count == 1 ? "" : "s") rejected")
            return .rejected
        }
        return .success
    }

    /// Says on standard error what another deliverer holds: the lines of those purchases answered `pending`.
    ///
    /// The command does not wait for such a claim: on a shared ledger the process that holds it may be delivering
    /// it now, and only its expiry tells a live deliverer from one that stopped; waiting out every claim (120
    /// seconds on PostgreSQL) would hold up each run beside another. It says when the last claim expires and which
    /// command delivers what is left then.
    static func noteClaims(in store: some ListableEntitlementStore) async {
        let now = SystemClock().now
        guard let claims = try? await store.claims(at: now), claims.claimed + claims.staleClaims > 0 else {
            return
        }
        if claims.claimed > 0, let until = claims.claimsHoldUntil {
            let seconds = max(0, Int(until.timeIntervalSince(now).rounded(.up)))
            Output.error(
                "note: \(claims.claimed) purchase(s) are claimed by another deliverer (a process at work on this "
                    + "ledger, or one that stopped): their lines say pending; the last claim expires at "
                    + "\(TextDate.text(until)), in \(seconds) s; 'iap ledger drain --wait \(seconds + 1)' (or any "
                    + "drain after then) delivers what is still undelivered"
            )
        }
        if claims.staleClaims > 0 {
            Output.error(
                "note: \(claims.staleClaims) purchase(s) were claimed by a deliverer that stopped, and their claim "
                    + "expired while this run read: 'iap ledger drain' delivers them"
            )
        }
    }

    /// One line of output, whether the line was rejected, and whether the ledger itself failed.
    struct Answer {
        let line: String
        var rejected = false
        var storeFailure: IAPError?
        /// The entry the line came to, when it recorded or touched one.
        var entry: LedgerEntry?
        /// The error code of a rejected line.
        var errorCode: String?

        /// The `ingest.line` event of the line.
        func event(started: Date) -> IAPEvent {
            let now = SystemClock().now
            let outcome = line.split(separator: " ").last.map(String.init)
            return IAPEvent(
                time: now,
                event: "ingest.line",
                userId: entry?.userId,
                productId: entry?.productId,
                transactionId: entry?.transactionId,
                originalTransactionId: entry?.originalTransactionId,
                environment: entry?.environment?.rawValue,
                outcome: rejected ? "rejected" : outcome,
                errorCode: errorCode,
                durationMs: max(0, now.millisecondsSince1970 - started.millisecondsSince1970)
            )
        }
    }

    static func ingestLine(
        _ token: String,
        number: Int,
        verifier: AppStoreSignedDataVerifier,
        pipeline: DeliveryPipeline,
        processor: NotificationProcessor,
        store: any EntitlementStore,
        user: String?
    ) async -> Answer {
        func reject(_ error: any Error) -> Answer {
            let failure = IAPError.wrapping(error, as: .internalError, "unexpected failure")
            let storeFailed = [IAPError.Code.storageFailure, .storageLocked, .storageCorrupted].contains(failure.code)
            return Answer(
                line: "REJECT \(number) \(failure.code.rawValue)",
                rejected: true,
                storeFailure: storeFailed ? failure : nil,
                errorCode: failure.code.rawValue
            )
        }
        func ack(_ text: String, _ entry: LedgerEntry? = nil) -> Answer {
            Answer(line: "ACK " + text, entry: entry)
        }
        /// A store that failed after the transaction was recorded: the line is acknowledged with the state the
        /// transaction is in (it is durable, and the next run delivers it), and ingestion stops.
        func recorded(_ transactionId: String?, as id: String, _ error: IAPError) async -> Answer? {
            guard [.storageFailure, .storageLocked].contains(error.code), let transactionId,
                let entry = try? await store.entry(transactionId: transactionId)
            else { return nil }
            return Answer(line: "ACK \(id) \(entry.deliveryState.rawValue)", storeFailure: error)
        }
        do {
            switch try verifier.detectKind(token) {
            case .transaction:
                let transaction = try verifier.transaction(token)
                let outcome = await pipeline.deliver(transaction, signedTransaction: token, userId: user)
                if case .rejected(let error) = outcome {
                    let id = transaction.transactionId ?? "-"
                    return await recorded(transaction.transactionId, as: id, error) ?? reject(error)
                }
                return ack("\(outcome.entry?.transactionId ?? "-") \(outcome.name)", outcome.entry)
            case .renewal:
                let renewal = try verifier.renewalInfo(token)
                try await pipeline.checkEnvironment(of: renewal)
                let stored = try await store.storeRenewalInfo(renewal)
                return ack("- \(stored ? "stored" : "stale")")
            case .notification:
                let notification = try verifier.notification(token)
                let uuid = notification.payload.notificationUUID ?? "-"
                let nested = notification.transaction?.transactionId
                switch await processor.process(notification, userId: user) {
                case .processed(_, let delivery):
                    if case .rejected(let error) = delivery {
                        return await recorded(nested, as: uuid, error) ?? reject(error)
                    }
                    return ack("\(uuid) \(delivery?.name ?? "processed")", delivery?.entry)
                case .duplicate:
                    return ack("\(uuid) duplicate")
                case .unowned:
                    return ack("\(uuid) unowned")
                case .rejected(let error), .failed(let error):
                    return await recorded(nested, as: uuid, error) ?? reject(error)
                }
            case .appTransaction:
                _ = try verifier.appTransaction(token)
                return ack("- verified")
            }
        } catch {
            return reject(error)
        }
    }
}
