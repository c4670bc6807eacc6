#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPPurchaseServer
import IAPServerAPI
import IAPStorageFile

/// `iap serve`: the purchase server — the app's submissions, Apple's notifications, entitlements and history, support,
/// metrics, the retry queue and the scheduled reconciliation — on `IAPHTTPServer`.
enum ServeCommand {
    static let spec = CommandSpec(
        name: "serve",
        summary: "run the purchase server: app submissions, App Store notifications, entitlements, support, metrics",
        synopsis: [
            "--port N [--host 127.0.0.1] [--max-connections-per-address N] \(CommandLedger.synopsis)",
            "  (--bundle-id ID --environment LIST [--app-apple-id N] [--root FILE.der]... [--catalog FILE]",
            "   | --app 'bundle-id=ID environment=LIST [app-apple-id=N] catalog=FILE [root=FILE.der]... [api-url=URL]'...)",
            "  \(GrantOptions.synopsis)",
            "  --user-jwt-secret-file FILE [--user-jwt-max-lifetime DURATION] --service-token-file FILE",
            "  [--api-url URL --issuer-id ID --key-id ID --auth-key FILE.p8 --reconcile-every DURATION]",
            "  [--token-ownership derived --token-secret-file FILE] [--prorated-refunds keep-access|revoke-access]",
            "  [--on-rescind-consent notify|revoke]",
            "  [--console-port N [--console-host 127.0.0.1] --console-operators-file FILE --console-secret-file FILE",
            "   [--console-insecure-cookies]]",
            "  [--events FILE] [--config FILE.json]",
        ],
        discussion: """
            Serves the purchase server over HTTP/1.1 (libmicrohttpd) until SIGTERM or SIGINT, then stops accepting,
            finishes the requests in flight, stops the background work and closes the ledger. The first line on
            standard output is 'listening on http://HOST:PORT' (--port 0 picks a free port); nothing else goes
            there, except, with --console-port, a second line 'console on http://HOST:PORT': the operations console
            (sign-in, overview, order lookup, customers, dead letters, notifications, analytics, audit;
            Documentation/Console.md) on a listener of its own. See Documentation/Server.md.

            Endpoints: POST /iap/v1/transactions (the app's submission, {"signedTransaction", "orderId"}, as the
            user of 'Authorization: Bearer <HS256 JWT>': sub is the user, exp is required, the signature is keyed by
            --user-jwt-secret-file); POST /iap/v1/notifications (App Store Server Notifications V2 of every listed
            environment: 200 once durably recorded, 400 when it does not verify); GET
            /iap/v1/users/{userId}/entitlements and GET /iap/v1/users/{userId}/history?limit=N&cursor=C (the JSON of
            iap ledger entitlements --json and iap ledger history --json); GET /iap/v1/me/entitlements (the same, for
            the user of the app's token); GET
            /iap/v1/app-transactions/{appTransactionId}/history (an Apple Account's purchases with their owners: the
            JSON of iap ledger history --app-transaction-id ID --json); POST /iap/v1/users/{userId}/account-tokens
            (body {"appAccountToken": UUID}: binds the token to the user before the purchase; 201 bound, 200 already
            bound to this user, 409 bound to another user, 400 not a UUID, 422 not derived from this user under
            --token-ownership derived); POST
            /iap/v1/support/orders/{orderId}/lookup and .../redeliver (body {"userId": ...} optional), audited with
            the X-Operator header's name; the user and support endpoints need 'Authorization: Bearer <the
            --service-token-file's contents>'. GET /healthz, GET /readyz, GET /metrics (Prometheus text 0.0.4).

            App-level notifications (RESCIND_CONSENT, EXTERNAL_PURCHASE_TOKEN, METADATA_UPDATE, MIGRATION,
            PRICE_CHANGE) are recorded once, reported as events, and forwarded on the webhook with --grant-url (type
            app.rescindConsent, app.externalPurchaseToken, ...; see Documentation/Notifications.md); a refusal
            other than 410 or 422 makes the App Store send the notification again. --on-rescind-consent revoke
            withdraws the access of every purchase whose appTransactionId the RESCIND_CONSENT names.

            GRANT says how purchases reach the customer: --grant-url URL --grant-secret-file FILE POSTs each grant
            and take-back to your backend, signed (X-IAP-Signature, Idempotency-Key); --ledger-only makes the ledger
            the entitlement source. No purchase is granted by guess: --grant-url needs a catalog (--catalog FILE, a
            swift-iap JSON catalog or an Xcode .storekit file, saved with the ledger; or the one saved before) and
            the server refuses to start without one; a purchase of a product the catalog does not know is recorded
            and parked (state unknownProduct, event delivery.unknownProduct, gauge iap_unknown_product_purchases)
            and delivered once the catalog names it: at start, and on SIGHUP, which reloads the catalog.
            --ledger-only without a catalog records and delivers each purchase as its signed transaction's type
            says, with a note on standard error. The webhook answers 2xx, or 409 for a key it applied before, when applied;
            410 or 422 refuses the delivery for good: it is dead-lettered at once; anything else (5xx, 408, 429,
            any other 4xx, a timeout after 10s, a refused connection) is retried with backoff, 12 attempts in all,
            then dead-lettered. A support redelivery calls the webhook again at once. The retry queue is drained
            continuously. With the App Store Server API
            (--issuer-id, --key-id, --auth-key; --api-url for another server than Apple's), the ledger is
            reconciled with Apple every --reconcile-every (default 1h; 'off' never; such as 30s, 15m, 6h, 1d,
            1h30m), incrementally and paced under Apple's rate limits, by one instance of a fleet at a time; and
            support can look orders up (Production only: --environment must list it). Without it the support
            endpoints answer 501. A support audit that does not reach the head the ledger keeps (deleted or cut with
            its head) refuses support (503) until 'iap support audit reseal'; purchases go on, and GET /readyz stays
            200 with a 'degraded: support-audit: ...' line.

            --token-ownership derived --token-secret-file FILE: an appAccountToken no user has claimed goes only to
            the user it was derived from (the UUIDv5 of the user id in the file's namespace UUID).

            Secrets come only from files (a trailing newline is not part of the secret) or the environment:
            IAP_USER_JWT_SECRET, IAP_SERVICE_TOKEN and IAP_GRANT_SECRET stand for the three secret files; the JWT
            secret and the service token are at least 16 bytes; a secret file (--auth-key and
            --database-password-file too) that its group or others may open is refused: chmod 600 FILE. No secret is
            ever printed. --config FILE.json holds
            the same settings as one JSON object whose keys are the option names without dashes ("bundle-id",
            "ledger-only": true, "root": [...]); options given on the command line win; unknown keys are refused.

            Several apps, one server and one ledger: give --app once per app (or "apps" in --config: an array of
            {"bundleId", "appAppleId", "environments", "catalog", "roots", "apiUrl"}) instead of the one-app
            options. Each signed transaction and notification goes to the verifier and the catalog of the app it
            names (its bundleId); data of an app not served is refused; each app needs its catalog. The history and
            analytics endpoints then take ?bundleId=ID (required), and so do the entitlements endpoints for one
            app (without it they answer every app's: {"user", "at", "apps": [{"bundleId", "entitlements",
            "balances"}]}); the webhook body names each purchase's bundleId; SIGHUP reloads every app's catalog. One App Store Server API key (--issuer-id,
            --key-id, --auth-key) serves every app: each app's tokens name its bundle id, and each purchase is
            reconciled with its own app's API.

            Events go to standard error as one JSON object per line (time, event, userId, productId,
            transactionId, originalTransactionId, environment, outcome, errorCode, durationMs, auditHead,
            address, notificationType, notificationSubtype), or to --events FILE. Exit status: 0 stopped by a signal, 1 failed to start, 2 usage error.
            """,
        options: [
            .value("port", "N", "the TCP port; 0 picks a free one (required)"),
            .value("host", "ADDRESS", "the address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every one)"),
            .value(
                "max-connections-per-address",
                "N",
                "the most connections from one IP address, 1...256 (default 32; beyond it closed at once); behind a "
                    + "reverse proxy every client has the proxy's address: raise it, up to 256"
            ),
        ] + CommandLedger.options + [
            .value("bundle-id", "ID", "the app whose signed data is accepted (required)"),
            .value(
                "environment",
                "LIST",
                "Production, Sandbox or LocalTesting, or a comma-separated list such as Production,Sandbox "
                    + "(required): signed data of each is accepted, and notifications of each"
            ),
            .value("app-apple-id", "N", "the App Apple ID signed data must carry (required with Production)"),
            .value("root", "FILE.der", "trust this root instead of Apple Root CA - G3", repeatable: true),
            CommandLedger.catalogOption,
            .value(
                "app",
                "SPEC",
                "one app of a server of several, instead of --bundle-id, --environment, --app-apple-id, --root and "
                    + "--catalog: 'bundle-id=ID environment=LIST [app-apple-id=N] catalog=FILE [root=FILE.der]... "
                    + "[api-url=URL]' or the same as a JSON object, as in the configuration file's apps; give it once "
                    + "per app",
                repeatable: true
            ),
        ] + GrantOptions.options + [
            .value(
                "user-jwt-secret-file",
                "FILE",
                "the HS256 secret of the app's user tokens, at least 16 bytes (or IAP_USER_JWT_SECRET) (required)"
            ),
            .value(
                "user-jwt-max-lifetime",
                "DURATION",
                "refuse a user token that lives longer (exp - iat, or exp - now without iat): 3600, 90m, 24h "
                    + "(default 24h)"
            ),
            .value(
                "service-token-file",
                "FILE",
                "the bearer token of the user and support endpoints, at least 16 bytes (or IAP_SERVICE_TOKEN) "
                    + "(required)"
            ),
            APISession.urlOption,
            .value("issuer-id", "ID", "the issuer id of the App Store Connect API key"),
            .value("key-id", "ID", "the key id of the API key"),
            .value("auth-key", "FILE.p8", "the API key's private key, as downloaded from App Store Connect, mode 0600"),
            .value(
                "reconcile-every",
                "DURATION",
                "reconcile with Apple this often (default 1h with the API; off never): 30s, 15m, 6h, 1d, 1h30m"
            ),
            CommandEvents.option,
            .value(
                "prorated-refunds",
                "POLICY",
                "what a prorated refund of a non-consumable or subscription does: keep-access (default: the webhook "
                    + "is told of the refunded share, accessKept, 0 units) or revoke-access (taken back as a full "
                    + "refund), decided once when the refund is processed and recorded with it (a restart under "
                    + "another policy changes new refunds only); a consumable always loses its share of units, "
                    + "rounded down"
            ),
            .value(
                "on-rescind-consent",
                "POLICY",
                "what a RESCIND_CONSENT (a parent withdrew consent) does: notify (default: an event, and the webhook "
                    + "is told, type app.rescindConsent) or revoke (also withdraw the access of every purchase of "
                    + "that Apple Account, taken back through the webhook)"
            ),
            .value(
                "token-ownership",
                "MODE",
                "who may claim an appAccountToken no user has claimed: first-claim (default: the first user who "
                    + "presents it) or derived (only the user it was derived from, see --token-secret-file)"
            ),
            .value(
                "token-secret-file",
                "FILE",
                "with --token-ownership derived: the namespace UUID the apps derive their tokens in "
                    + "(UUIDv5 of the user id; Documentation/AntiLostOrder.md)"
            ),
            .value(
                "console-port",
                "N",
                "serve the operations console on this port (0 picks a free one); off unless given"
            ),
            .value("console-host", "HOST", "the console's address (default 127.0.0.1)"),
            .value(
                "console-operators-file",
                "FILE",
                "the console's operators, 0600, as iap console add-operator writes it (required with --console-port)"
            ),
            .value(
                "console-secret-file",
                "FILE",
                "the key of the console's session cookies, at least 16 bytes, the same on every instance (required "
                    + "with --console-port)"
            ),
            .flag("console-insecure-cookies", "send the console's cookie over plain HTTP too (testing only)"),
            .value("config", "FILE.json", "the same settings as a JSON object; options on the command line win"),
        ],
        examples: [
            "iap serve --port 8080 --data /var/lib/iap --bundle-id com.example.app --environment Production,Sandbox "
                + "--app-apple-id 1234567890 --grant-url https://wallet.internal/iap --grant-secret-file "
                + "/etc/iap/grant.secret --user-jwt-secret-file /etc/iap/user-jwt.secret --service-token-file "
                + "/etc/iap/service.token --issuer-id ISSUER --key-id KEY --auth-key /etc/iap/AuthKey.p8",
            "iap serve --config /etc/iap/serve.json",
        ]
    )

    /// The environment variables that may hold the secrets instead of their files.
    static let userSecretVariable = "IAP_USER_JWT_SECRET"
    static let serviceTokenVariable = "IAP_SERVICE_TOKEN"
    static let grantSecretVariable = "IAP_GRANT_SECRET"

    static func run(_ arguments: [String]) async -> Never {
        // First of all, so that a signal during start-up stops the server cleanly once it listens.
        let signals = ShutdownSignals()
        signal(SIGPIPE, SIG_IGN)
        // SIGHUP reloads the catalog once the server runs; until then it is ignored rather than fatal. The observer
        // is installed now, so that a SIGHUP sent as soon as "listening on" is printed is never lost.
        let running = LockedValue<(server: PurchaseServer, arguments: Arguments)?>(nil)
        let reloads = SignalObserver([SIGHUP]) { _ in
            guard let (server, parsed) = running.withLock({ $0 }) else { return }
            Task { await ServeServer.reloadCatalog(server, parsed) }
        }
        let parsed = parse(arguments)
        let settings: ServeSettings
        do {
            settings = try ServeSettings(parsed)
        } catch {
            spec.fail(error)
        }
        let server: PurchaseServer
        do {
            server = try await ServeServer.make(settings, parsed)
        } catch let error as Arguments.UsageError {
            spec.fail(error)
        } catch {
            notStarted(error)
        }
        do {
            // PurchaseServer.run waits for the signals and stops the server; SIGHUP reloads once it listens.
            try await server.run(until: signals) { server in
                running.withLock { $0 = (server, parsed) }
                Output.line("listening on \(server.origin ?? "")")
                if let console = server.consoleOrigin {
                    Output.line("console on \(console)")
                }
                Output.flush()
            }
        } catch {
            notStarted(error)
        }
        withExtendedLifetime(reloads) {}
        terminate(.success)
    }

    /// Says why the server did not start, and ends the process.
    private static func notStarted(_ error: any Error) -> Never {
        let failure = IAPError.wrapping(error, as: .internalError, "the server did not start")
        Output.error("error: \(failure.code.rawValue): \(failure.message)")
        terminate(.rejected)
    }

    /// Parses the command line and, with `--config`, the configuration file under it.
    static func parse(_ arguments: [String]) -> Arguments {
        let given = spec.parse(arguments)
        let path: String?
        do {
            path = try given.value("config")
        } catch {
            spec.fail(error)
        }
        guard let path else { return given }
        do {
            let fromFile = try ServeConfigFile.arguments(path, options: spec.options, given: given)
            return spec.parse(fromFile + arguments)
        } catch {
            spec.fail(error)
        }
    }

    /// A duration such as `30s`, `15m`, `6h`, `1d` or `1h30m`; `off` or `0` is `nil`.
    ///
    /// - Parameter text: The option's value.
    /// - Returns: The duration, or `nil` for never.
    /// - Throws: A usage error for anything else, or a duration under one second or over 30 days.
    static func duration(_ text: String) throws(Arguments.UsageError) -> Duration? {
        if text == "off" || text == "0" {
            return nil
        }
        guard let seconds = ServeDuration.seconds(text, allowsBareNumber: false) else {
            throw .init(
                message: "--reconcile-every takes a duration such as 30s, 15m, 6h, 1d or 1h30m, or off; not '\(text)'"
            )
        }
        guard (1...(30 * 86_400)).contains(seconds) else {
            throw .init(message: "--reconcile-every must be from 1s to 30d, or off")
        }
        return .seconds(seconds)
    }
}
