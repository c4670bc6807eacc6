import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPServerAPI
import IAPTransportURLSession
import IAPWebhook

/// GRANT: how a command that delivers gives the customer what they bought.
///
/// - `--grant-url URL --grant-secret-file FILE`: each grant and take-back is POSTed to the integrator's backend by a
///   `WebhookFulfillmentHook`, signed with HMAC-SHA256 keyed by the file's bytes (without a trailing newline).
/// - `--ledger-only`: the ledger itself is the entitlement source (the app's backend reads entitlements from it):
///   recording a purchase is delivering it.
///
/// A command that would deliver without either is a usage error: a tool must never record a purchase as delivered
/// that nobody gave the customer.
enum GrantOptions {
    /// How grants reach the customer.
    enum Path {
        /// POSTed to a backend.
        case webhook(URL, secret: [UInt8])
        /// The ledger is the entitlement source.
        case ledgerOnly
    }

    /// The options, as a usage lists them.
    static let options: [CommandSpec.Option] = [
        .value(
            "grant-url",
            "URL",
            "POST each grant and take-back there, signed (WebhookFulfillmentHook); a redirect is never followed, and "
                + "no user:password@ is accepted"
        ),
        .value(
            "grant-secret-file",
            "FILE",
            "the webhook's HMAC-SHA256 secret: the file's bytes without a trailing newline (with --grant-url); "
                + "mode 0600: a file its group or others may open is refused"
        ),
        .flag("ledger-only", "the ledger is the entitlement source: recording a purchase is delivering it"),
    ]

    /// How a usage line writes GRANT.
    static let synopsis = "(--grant-url URL --grant-secret-file FILE | --ledger-only)"

    /// The names of the options, for commands that take them only when they deliver.
    static let names = ["grant-url", "grant-secret-file", "ledger-only"]

    /// The grant path the options name.
    ///
    /// - Parameters:
    ///   - arguments: The parsed arguments.
    ///   - secretVariable: An environment variable that may hold the secret instead of `--grant-secret-file`
    ///     (`iap serve`'s `IAP_GRANT_SECRET`); `nil` for commands that read it from the file only.
    /// - Returns: The path.
    /// - Throws: A usage error when neither is given (explaining both), both are, or one is incomplete.
    static func parse(_ arguments: Arguments, secretVariable: String? = nil) throws(Arguments.UsageError) -> Path {
        let url = try arguments.value("grant-url")
        let secretFile = try arguments.value("grant-secret-file")
        let ledgerOnly = arguments.has("ledger-only")
        let variableSecret = try secretVariable.flatMap { name throws(Arguments.UsageError) in
            try SecretOption.environment(name)
        }
        switch (url, ledgerOnly) {
        case (nil, false):
            if secretFile != nil {
                throw .init(message: "--grant-secret-file goes with --grant-url URL")
            }
            throw .init(
                message: "this command delivers purchases: say how with --grant-url URL --grant-secret-file FILE (each "
                    + "grant and take-back POSTed to your backend, signed) or --ledger-only (the ledger is the "
                    + "entitlement source)"
            )
        case (_?, true):
            throw .init(message: "give --grant-url or --ledger-only, not both")
        case (nil, true):
            if secretFile != nil {
                throw .init(message: "--grant-secret-file goes with --grant-url, not --ledger-only")
            }
            return .ledgerOnly
        case (let text?, false):
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host?.isEmpty == false
            else {
                throw .init(message: "--grant-url must be an http or https URL, not '\(Arguments.shown(url: text))'")
            }
            guard url.user == nil, url.password == nil else {
                // Not echoed: it holds a password, which a command line shows to every user of the machine.
                throw .init(
                    message: "--grant-url must not hold a user or password (user:password@): the command line is "
                        + "visible to every user of the machine; the webhook is authenticated by its signature, keyed "
                        + "by --grant-secret-file"
                )
            }
            switch (secretFile, variableSecret) {
            case (let path?, nil):
                return .webhook(url, secret: try checked(try SecretOption.read(path, option: "--grant-secret-file")))
            case (nil, let secret?):
                return .webhook(url, secret: try checked(secret))
            case (_?, _?):
                throw .init(message: "give --grant-secret-file or set \(secretVariable ?? ""), not both")
            case (nil, nil):
                throw .init(
                    message: "--grant-url needs --grant-secret-file FILE, the shared secret that signs requests"
                        + (secretVariable.map { " (or the environment variable \($0))" } ?? "")
                )
            }
        }
    }

    /// Refuses GRANT options on a command run that delivers nothing.
    ///
    /// - Parameters:
    ///   - arguments: The parsed arguments.
    ///   - condition: What makes the command deliver, for the message (`--redeliver`).
    static func refuse(_ arguments: Arguments, without condition: String) throws(Arguments.UsageError) {
        for name in names where arguments.options[name] != nil || arguments.has(name) {
            throw .init(message: "--\(name) applies only with \(condition)")
        }
    }

    /// A secret that can key HMAC-SHA256.
    private static func checked(_ secret: [UInt8]) throws(Arguments.UsageError) -> [UInt8] {
        do {
            _ = try HMACSHA256(key: secret)
        } catch {
            throw .init(message: "the grant secret: \((error as? IAPError)?.message ?? "\(error)")")
        }
        return secret
    }

    /// The fulfillment hook of a path, and how the audit log names the path.
    ///
    /// - Parameter path: The grant path.
    /// - Returns: The hook, and `webhook <host>` or `ledger-only`.
    /// - Throws: ``IAPError`` when the secret cannot key HMAC-SHA256.
    static func hook(_ path: Path) throws -> (hook: any FulfillmentHook, description: String) {
        switch path {
        case .ledgerOnly:
            // The ledger is what the app's backend reads: once recorded, the purchase is delivered.
            return (ClosureFulfillmentHook(grant: { _ in }, revoke: { _ in }), "ledger-only")
        case .webhook(let url, let secret):
            let hook = WebhookFulfillmentHook(
                url: url,
                authenticator: try HMACSHA256(key: secret),
                // A signed grant goes to the configured address or fails: a 3xx is a failed attempt, never followed.
                transport: URLSessionTransport(redirects: .none)
            )
            return (hook, "webhook \(url.host ?? url.absoluteString)")
        }
    }
}
