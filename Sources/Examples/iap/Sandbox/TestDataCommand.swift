import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto

/// `iap testdata`: signed App Store data from a fresh test PKI, for trying the tools and for the crash test.
enum TestDataCommand {
    static let transactionsSpec = CommandSpec(
        name: "testdata transactions",
        summary: "N signed transactions from a new test PKI, one per line, and its root certificate",
        synopsis: [
            "--count N --root-out FILE.der [--catalog-out FILE] [--bundle-id ID]",
            "  [--environment Sandbox|Production] [--users N]",
        ],
        discussion: """
            Prints N signed transactions, one per line, signed by a new test PKI exactly as the App Store signs
            (ES256, x5c chain), and writes that PKI's root certificate to --root-out, so that
            'iap verify --root FILE.der' and 'iap ledger ingest --root FILE.der' accept them. The products cycle
            through coins.100 (twice), pro.lifetime and plus.monthly.

            No user id is signed into the data: each transaction carries the appAccountToken of one of --users
            users, user-0, user-1, ..., in turn (the UUID version 5 of the name in the namespace
            \(namespace.uuidString.lowercased()), as AppAccountToken.derive makes it). No ledger binds these tokens
            to those names, so 'iap ledger ingest' without --user records each purchase waiting for its owner;
            with --token-is-user it delivers each purchase to its token: the user id in the ledger is the
            lowercase UUID ('iap ledger stats' counts them, 'iap decode' shows a transaction's appAccountToken,
            'iap ledger entitlements --user UUID' reads one). --user ID delivers them all to one user. Each user's
            purchases carry the app transaction id of one Apple Account, user-N's \(firstAppTransactionId) + N
            ('iap ledger history --app-transaction-id ID' lists them). This data proves nothing about a real
            purchase.
            """,
        options: [
            .value("count", "N", "how many transactions, 1 to 10000000 (required)"),
            .value("root-out", "FILE.der", "where to write the test root certificate, DER (required)"),
            .value("catalog-out", "FILE", "also write a matching swift-iap JSON catalog there"),
            .value("bundle-id", "ID", "the bundle id signed into each transaction (default com.example.app)"),
            .value("environment", "ENV", "Sandbox (default) or Production"),
            .value(
                "users",
                "N",
                "how many distinct appAccountTokens the transactions carry, user-0's to user-(N-1)'s (default 100)"
            ),
        ],
        examples: [
            "iap testdata transactions --count 100 --root-out root.der --catalog-out catalog.json > tokens.txt"
        ]
    )

    static let spec = CommandSpec(
        name: "testdata",
        summary: "signed App Store data from a test PKI, for trying the tools",
        discussion: """
            Signed App Store data from a fresh test PKI, for trying 'iap verify' and 'iap ledger' without a real
            purchase.
            """,
        subcommands: [transactionsSpec],
        examples: ["iap testdata transactions --count 4 --root-out root.der | iap verify --batch --root root.der"]
    )

    static func run(_ arguments: [String]) -> Never {
        let (command, rest) = spec.subcommand(arguments)
        let parsed = command.parse(rest)
        do {
            try parsed.noPositionals()
            guard let count = try parsed.value("count").flatMap({ Int($0) }), (1...10_000_000).contains(count) else {
                throw Arguments.UsageError(message: "--count must be a whole number from 1 to 10000000")
            }
            guard let rootOut = try parsed.value("root-out") else {
                throw Arguments.UsageError(message: "--root-out FILE.der is required")
            }
            let users = try parsed.value("users").flatMap { Int($0) } ?? 100
            guard users > 0 else {
                throw Arguments.UsageError(message: "--users must be positive")
            }
            let bundleId = try parsed.value("bundle-id") ?? "com.example.app"
            let environment: AppStoreEnvironment =
                switch try parsed.value("environment") {
                case nil, "Sandbox": .sandbox
                case "Production": .production
                case let other?:
                    throw Arguments.UsageError(message: "--environment must be Sandbox or Production, not '\(other)'")
                }
            try generate(
                count: count,
                users: users,
                bundleId: bundleId,
                environment: environment,
                rootOut: rootOut,
                catalogOut: try parsed.value("catalog-out")
            )
            terminate(.success)
        } catch let error as Arguments.UsageError {
            command.fail(error)
        } catch {
            let failure = IAPError.wrapping(error, as: .internalError, "generating test data failed")
            Output.error("error: \(failure.code.rawValue): \(failure.message)")
            terminate(.rejected)
        }
    }

    /// The app transaction id of user-0's Apple Account; user-N's is N more.
    static let firstAppTransactionId = 704_000_000_000_000

    /// The namespace of the test users' appAccountTokens (``AppAccountToken/derive(from:namespace:)``).
    static let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10") ?? UUID()

    static func generate(
        count: Int,
        users: Int,
        bundleId: String,
        environment: AppStoreEnvironment,
        rootOut: String,
        catalogOut: String?
    ) throws {
        let signedAt = Date(millisecondsSince1970: 1_767_225_600_000)
        let pki = try TestPKI.generate(
            TestPKI.Options(
                notBefore: Date(millisecondsSince1970: 1_704_067_200_000),
                notAfter: Date(millisecondsSince1970: 2_524_608_000_000)
            )
        )
        try Data(pki.root.derBytes).write(to: URL(fileURLWithPath: rootOut), options: .atomic)
        if let catalogOut {
            let catalog = """
                {"version":1,"products":[
                {"productId":"coins.100","type":"consumable","unitsPerPurchase":100,"entitlements":[]},
                {"productId":"pro.lifetime","type":"nonConsumable","entitlements":["pro"]},
                {"productId":"plus.monthly","type":"autoRenewable","subscriptionGroupId":"plus","groupLevel":1,"entitlements":["plus"]}
                ]}

                """
            try Data(catalog.utf8).write(to: URL(fileURLWithPath: catalogOut), options: .atomic)
        }
        let signer = JWSSigner(key: pki.leafKey, certificateChain: pki.x5c)
        let products: [(String, ProductType)] = [
            ("coins.100", .consumable), ("coins.100", .consumable), ("pro.lifetime", .nonConsumable),
            ("plus.monthly", .autoRenewableSubscription),
        ]
        for index in 0..<count {
            let id = String(2_000_000_000_000_001 + index)
            let (productId, type) = products[index % products.count]
            let user = "user-\(index % users)"
            let purchased = signedAt.addingTimeInterval(Double(index))
            let token = AppAccountToken.derive(from: user, namespace: namespace).uuidString.lowercased()
            let transaction = TransactionPayload(
                originalTransactionId: id,
                transactionId: id,
                bundleId: bundleId,
                productId: productId,
                subscriptionGroupIdentifier: type == .autoRenewableSubscription ? "plus" : nil,
                purchaseDate: purchased,
                originalPurchaseDate: purchased,
                expiresDate: type == .autoRenewableSubscription ? purchased.addingTimeInterval(30 * 86_400) : nil,
                quantity: 1,
                type: type,
                appAccountToken: token,
                inAppOwnershipType: .purchased,
                signedDate: purchased,
                environment: environment,
                storefront: "USA",
                storefrontId: "143441",
                transactionReason: .purchase,
                currency: "USD",
                price: 990,
                appTransactionId: String(Self.firstAppTransactionId + index % users)
            )
            Output.line(try signer.sign(transaction))
        }
    }
}
