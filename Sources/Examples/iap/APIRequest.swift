import Foundation
import IAPCommandLine
import IAPCore
import IAPServerAPI

/// One call `iap api` makes: the subcommand and its arguments, parsed and checked before anything is sent.
enum APIRequest {
    case transaction(id: String)
    case history(anyTransactionId: String, filters: TransactionHistoryRequest, revision: String?)
    case statuses(anyTransactionId: String, status: [SubscriptionStatus])
    case refunds(anyTransactionId: String, revision: String?)
    case lookUpOrder(orderId: String)
    case requestTestNotification
    case testNotificationStatus(token: String)
    case notificationHistory(NotificationHistoryRequest, paginationToken: String?)
    case extend(originalTransactionId: String, ExtendRenewalDateRequest)

    /// The subcommands, each with its own options besides the common ones (``APISession/options``).
    static let specs: [CommandSpec] = [
        spec(
            "transaction",
            "one transaction's signed info (Get Transaction Info)",
            ["TRANSACTION_ID"],
            example: "2000000000000001"
        ),
        spec(
            "history",
            "a customer's transaction history, every page (Get Transaction History v2)",
            [
                "ANY_TRANSACTION_ID [--revision R] [--product-id ID]... [--product-type T]...",
                "  [--start MILLIS] [--end MILLIS] [--sort ASCENDING|DESCENDING] [--revoked true|false]",
                "  [--subscription-group ID]... [--ownership PURCHASED|FAMILY_SHARED]",
            ],
            [
                .value("revision", "R", "resume after the page that answered this revision"),
                .value("product-id", "ID", "only this product", repeatable: true),
                .value(
                    "product-type",
                    "T",
                    "only this type: AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE, NON_CONSUMABLE",
                    repeatable: true
                ),
                .value("start", "MILLIS", "only purchases from this instant, in milliseconds since 1970"),
                .value("end", "MILLIS", "only purchases before this instant, in milliseconds since 1970"),
                .value("sort", "ORDER", "ASCENDING or DESCENDING by modification date"),
                .value("revoked", "BOOL", "true: only revoked transactions; false: none of them"),
                .value("subscription-group", "ID", "only this subscription group", repeatable: true),
                .value("ownership", "TYPE", "PURCHASED or FAMILY_SHARED"),
            ],
            example: "2000000000000001 --product-type CONSUMABLE --sort DESCENDING"
        ),
        spec(
            "statuses",
            "the status of every subscription of a customer (Get All Subscription Statuses)",
            ["ANY_TRANSACTION_ID [--status 1..5]..."],
            [
                .value(
                    "status",
                    "N",
                    "only this status: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked",
                    repeatable: true
                )
            ],
            example: "2000000000000001 --status 1"
        ),
        spec(
            "refunds",
            "a customer's refunded transactions, every page (Get Refund History)",
            ["ANY_TRANSACTION_ID [--revision R]"],
            [.value("revision", "R", "resume after the page that answered this revision")],
            example: "2000000000000001"
        ),
        spec(
            "lookup-order",
            "the transactions of an order id from a receipt email (Look Up Order ID)",
            ["ORDER_ID"],
            example: "MH43IXG3WA"
        ),
        spec(
            "test-notification",
            "request a TEST notification, or with --token check the status of one",
            ["[--token TOKEN]"],
            [.value("token", "TOKEN", "the testNotificationToken a request answered: ask for its status")],
            example: ""
        ),
        spec(
            "notification-history",
            "the notifications sent in a time window, every page (Get Notification History)",
            [
                "--start MILLIS --end MILLIS [--type T [--subtype S] | --transaction-id ID] [--only-failures]",
                "  [--pagination-token TOKEN]",
            ],
            [
                .value("start", "MILLIS", "the window's start, in milliseconds since 1970 (required)"),
                .value("end", "MILLIS", "the window's end, in milliseconds since 1970 (required)"),
                .value("type", "T", "only this notificationType (DID_RENEW, REFUND, ...)"),
                .value("subtype", "S", "only this subtype (with --type)"),
                .value("transaction-id", "ID", "only the notifications of this transaction"),
                .flag("only-failures", "only notifications that did not reach the server"),
                .value("pagination-token", "TOKEN", "resume after the page that answered this token"),
            ],
            example: "--start 1767225600000 --end 1767830400000 --only-failures"
        ),
        spec(
            "extend",
            "extend one subscription's renewal date (Extend a Subscription Renewal Date)",
            ["ORIGINAL_TRANSACTION_ID --days 1..90 --reason 0..3 --request-id UUID"],
            [
                .value("days", "N", "how many days, 1 to 90 (required)"),
                .value("reason", "CODE", "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue (required)"),
                .value("request-id", "UUID", "your identifier of the request, 1 to 128 characters (required)"),
            ],
            example: "2000000000000001 --days 7 --reason 3 --request-id 8d1c0c3e-2b5a-4f4e-9d43-1f0a6c2b7e11"
        ),
    ]

    /// A subcommand's usage: its own options, then the common ones.
    private static func spec(
        _ word: String,
        _ summary: String,
        _ synopsis: [String],
        _ options: [CommandSpec.Option] = [],
        example: String
    ) -> CommandSpec {
        let common = "--issuer-id ID --key-id ID --auth-key FILE.p8 --bundle-id ID --environment ENV [--api-url URL]"
        return CommandSpec(
            name: "api \(word)",
            summary: summary,
            synopsis: synopsis + ["  \(common)", "  [--decode [--root FILE.der]... [--app-apple-id N]]"],
            discussion: summary.prefix(1).uppercased() + summary.dropFirst() + ".\n\n" + APICommand.answers,
            options: options + APISession.options + [APISession.decodeOption],
            examples: [
                (["iap api \(word)"] + (example.isEmpty ? [] : [example]) + [
                    "--issuer-id ISSUER --key-id KEY --auth-key key.p8 --bundle-id com.example.app --environment Sandbox"
                ]).joined(separator: " ")
            ]
        )
    }

    /// Parses a subcommand's arguments.
    init(_ subcommand: String, _ arguments: Arguments) throws(Arguments.UsageError) {
        switch subcommand {
        case "transaction":
            self = .transaction(id: try Self.identifier("TRANSACTION_ID", arguments))
        case "history":
            var filters = TransactionHistoryRequest()
            filters.startDate = try Self.date("start", arguments)
            filters.endDate = try Self.date("end", arguments)
            let productIds = arguments.values("product-id")
            filters.productIds = productIds.isEmpty ? nil : productIds
            var types: [TransactionHistoryRequest.ProductType] = []
            for text in arguments.values("product-type") {
                types.append(try Self.choice("product-type", text, TransactionHistoryRequest.ProductType.init))
            }
            filters.productTypes = types.isEmpty ? nil : types
            filters.sort = try arguments.value("sort").map { text throws(Arguments.UsageError) in
                try Self.choice("sort", text, TransactionHistoryRequest.Order.init)
            }
            filters.revoked = try arguments.value("revoked").map { text throws(Arguments.UsageError) in
                try Self.choice("revoked", text, { ["true": true, "false": false][$0] }, expected: "true or false")
            }
            let groups = arguments.values("subscription-group")
            filters.subscriptionGroupIdentifiers = groups.isEmpty ? nil : groups
            filters.inAppOwnershipType = try arguments.value("ownership").map { text throws(Arguments.UsageError) in
                let known = InAppOwnershipType.allKnown
                return try Self.choice(
                    "ownership",
                    text,
                    { name in known.first { $0.rawValue == name } },
                    expected: "PURCHASED or FAMILY_SHARED"
                )
            }
            self = .history(
                anyTransactionId: try Self.identifier("ANY_TRANSACTION_ID", arguments),
                filters: filters,
                revision: try arguments.value("revision")
            )
        case "statuses":
            var status: [SubscriptionStatus] = []
            for text in arguments.values("status") {
                guard let value = Int32(text), SubscriptionStatus.allKnown.contains(SubscriptionStatus(rawValue: value))
                else {
                    throw Arguments.UsageError(message: "--status must be 1 to 5, not '\(text)'")
                }
                status.append(SubscriptionStatus(rawValue: value))
            }
            self = .statuses(anyTransactionId: try Self.identifier("ANY_TRANSACTION_ID", arguments), status: status)
        case "refunds":
            self = .refunds(
                anyTransactionId: try Self.identifier("ANY_TRANSACTION_ID", arguments),
                revision: try arguments.value("revision")
            )
        case "lookup-order":
            self = .lookUpOrder(orderId: try Self.identifier("ORDER_ID", arguments))
        case "test-notification":
            try Self.noPositional(arguments)
            if let token = try arguments.value("token") {
                self = .testNotificationStatus(token: token)
            } else {
                self = .requestTestNotification
            }
        case "notification-history":
            try Self.noPositional(arguments)
            guard let start = try Self.date("start", arguments), let end = try Self.date("end", arguments) else {
                throw Arguments.UsageError(message: "notification-history needs --start and --end")
            }
            var request = NotificationHistoryRequest(startDate: start, endDate: end)
            request.notificationType = try arguments.value("type").map(NotificationType.init(rawValue:))
            request.notificationSubtype = try arguments.value("subtype").map(NotificationSubtype.init(rawValue:))
            request.transactionId = try arguments.value("transaction-id")
            if request.notificationSubtype != nil && request.notificationType == nil {
                throw Arguments.UsageError(message: "--subtype needs --type")
            }
            if request.transactionId != nil && request.notificationType != nil {
                throw Arguments.UsageError(message: "give --type (and --subtype) or --transaction-id, not both")
            }
            request.onlyFailures = arguments.has("only-failures") ? true : nil
            self = .notificationHistory(request, paginationToken: try arguments.value("pagination-token"))
        case "extend":
            let id = try Self.identifier("ORIGINAL_TRANSACTION_ID", arguments)
            guard let daysText = try arguments.value("days"), let reasonText = try arguments.value("reason"),
                let requestId = try arguments.value("request-id")
            else {
                throw Arguments.UsageError(message: "extend needs --days, --reason and --request-id")
            }
            guard let days = Int32(daysText), (1...90).contains(days) else {
                throw Arguments.UsageError(message: "--days must be 1 to 90, not '\(daysText)'")
            }
            guard let reason = Int32(reasonText), (0...3).contains(reason) else {
                throw Arguments.UsageError(message: "--reason must be 0 to 3, not '\(reasonText)'")
            }
            guard (1...128).contains(requestId.count) else {
                throw Arguments.UsageError(message: "--request-id must have 1 to 128 characters")
            }
            self = .extend(
                originalTransactionId: id,
                ExtendRenewalDateRequest(
                    extendByDays: days,
                    extendReasonCode: ExtendReasonCode(rawValue: reason),
                    requestIdentifier: requestId
                )
            )
        default:
            throw Arguments.UsageError(message: "unknown api subcommand '\(subcommand)'")
        }
    }

    private static func identifier(_ name: String, _ arguments: Arguments) throws(Arguments.UsageError) -> String {
        guard arguments.positionals.count == 1, let id = arguments.positionals.first, !id.isEmpty else {
            throw Arguments.UsageError(
                message: "expected one \(name), got \(arguments.positionals.count) arguments"
            )
        }
        return id
    }

    private static func noPositional(_ arguments: Arguments) throws(Arguments.UsageError) {
        guard arguments.positionals.isEmpty else {
            throw Arguments.UsageError(message: "unexpected argument '\(arguments.positionals[0])'")
        }
    }

    private static func date(_ name: String, _ arguments: Arguments) throws(Arguments.UsageError) -> Date? {
        guard let text = try arguments.value(name) else {
            return nil
        }
        guard let millis = Int64(text), millis >= 0, millis <= AppStoreJSON.maximumMilliseconds else {
            throw Arguments.UsageError(message: "--\(name) must be milliseconds since 1970, not '\(text)'")
        }
        return Date(millisecondsSince1970: millis)
    }

    private static func choice<Value: CaseIterable & RawRepresentable>(
        _ name: String,
        _ text: String,
        _ make: (String) -> Value?
    ) throws(Arguments.UsageError) -> Value where Value.RawValue == String {
        let expected = Value.allCases.map(\.rawValue).joined(separator: ", ")
        return try choice(name, text, make, expected: expected)
    }

    private static func choice<Value>(
        _ name: String,
        _ text: String,
        _ make: (String) -> Value?,
        expected: String = ""
    ) throws(Arguments.UsageError) -> Value {
        guard let value = make(text) else {
            let hint = expected.isEmpty ? "" : ": one of \(expected)"
            throw Arguments.UsageError(message: "--\(name) '\(text)' is not accepted\(hint)")
        }
        return value
    }
}
