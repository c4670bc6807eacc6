import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// A purchase server answering in process: a simulated App Store of Production and a verifier of its PKI, an
/// in-memory ledger behind a fault injector, a recording wallet, a manual clock, the pipeline, both authenticators
/// with known secrets, the metrics, the readiness, and the support desk over the simulated App Store Server API.
struct PurchaseServerWorld {
    static let userSecret = "user-jwt-secret-for-route-tests-0123456789"
    static let serviceToken = "service-token-for-route-tests-6f1b7c7e"
    /// The namespace apps derive their appAccountTokens from (``TokenOwnershipCheck/derived(namespace:)``).
    static let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10") ?? UUID()
    /// A product the App Store sells and the server's catalog does not know yet.
    static let unknownProductId = "gems.new"

    let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
    let appStore: SimulatedAppStore
    let catalog: StaticProductCatalog
    let ledger = InMemoryEntitlementStore()
    /// The ledger as the pipeline sees it: faults injected here make the ledger fail.
    let store: FaultInjectingEntitlementStore
    let wallet = RecordingFulfillmentHook()
    let events = InMemoryEventSink()
    let pipeline: DeliveryPipeline
    let metrics: PurchaseServerMetrics
    let readiness: ServerReadiness
    let auditLog = InMemorySupportAuditLog()
    let routes: PurchaseServerRoutes
    /// The order tool the support routes use, when the world has support.
    let lookup: OrderLookup?
    let client: RouterTester

    /// Creates the world.
    ///
    /// - Parameters:
    ///   - support: Whether the support endpoints have an order tool (else they answer `501`).
    ///   - tokenOwnership: Who may claim an appAccountToken; the first claimant by default.
    ///   - ready: Whether `GET /readyz` starts ready.
    init(support: Bool = true, tokenOwnership: TokenOwnershipCheck? = nil, ready: Bool = true) throws {
        catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
            CatalogProduct(productId: "pro.lifetime", kind: .nonConsumable, entitlements: ["pro"]),
            CatalogProduct(
                productId: "plus.monthly",
                kind: .autoRenewable,
                subscriptionGroupId: "plus",
                groupLevel: 1,
                entitlements: ["plus"],
                duration: SubscriptionPeriod(value: 1, unit: .month)
            ),
        ])
        let unknown = CatalogProduct(productId: Self.unknownProductId, kind: .consumable, entitlements: [])
        appStore = try SimulatedAppStore(
            products: catalog.products + [unknown],
            configuration: .init(environment: .production, gracePeriodDays: 16),
            clock: clock
        )
        let verifier = try AppStoreSignedDataVerifier(configuration: appStore.verifierConfiguration)
        store = FaultInjectingEntitlementStore(wrapping: ledger)
        pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: store,
            hook: wallet,
            clock: clock,
            retryPolicy: RetryPolicy(jitter: 0),
            tokenOwnership: tokenOwnership,
            events: events
        )
        metrics = try PurchaseServerMetrics()
        readiness = ServerReadiness(ready: ready)
        var lookup: OrderLookup?
        if support {
            let connection = try SimulatedAppStoreTransport.connect(to: appStore)
            lookup = OrderLookup(
                clients: AppStoreServerAPIClients(connection.client),
                pipeline: pipeline,
                auditLog: auditLog
            )
        }
        self.lookup = lookup
        routes = PurchaseServerRoutes(
            pipeline: pipeline,
            users: HS256UserAuthenticator(secret: try HMACSHA256(key: Array(Self.userSecret.utf8)), clock: clock),
            service: try ServiceTokenAuthenticator(token: Array(Self.serviceToken.utf8)),
            support: lookup,
            metrics: metrics,
            readiness: readiness
        )
        client = RouterTester(router: routes.router)
    }

    // MARK: - Requests

    /// Sends a request with the service token.
    func service(
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: String = ""
    ) async throws -> TestResponse {
        try await client.send(method, target, bearer: Self.serviceToken, headers: headers, body: body)
    }

    /// The app's submission of a signed transaction, with a user token of `user` (none when `nil`).
    func submit(_ signedTransaction: String, as user: String?, userId: String? = nil) async throws -> TestResponse {
        var body = #"{"signedTransaction":"\#(signedTransaction)""#
        if let userId {
            body += #","userId":"\#(userId)""#
        }
        return try await client.send(
            "POST",
            "/iap/v1/transactions",
            bearer: try user.map { try userToken($0) },
            body: body + "}"
        )
    }

    /// The App Store's post of a signed notification.
    func notify(_ signedPayload: String) async throws -> TestResponse {
        try await client.send("POST", "/iap/v1/notifications", body: #"{"signedPayload":"\#(signedPayload)"}"#)
    }

    // MARK: - The App Store

    /// The appAccountToken `user`'s app puts on its purchases.
    static func accountToken(_ user: String) -> UUID {
        AppAccountToken.derive(from: user, namespace: namespace)
    }

    /// A purchase on the simulated App Store by `user`, with their derived appAccountToken.
    func buy(_ productId: String, user: String) async throws -> SimulatedTransaction {
        let result = try await appStore.purchase(
            productId: productId,
            account: user,
            appAccountToken: Self.accountToken(user)
        )
        return try #require(result.transaction, "the purchase of \(productId) did not complete: \(result)")
    }

    /// A purchase by `user`, submitted by their app and delivered; the App Store's notifications are dropped.
    func buyAndSubmit(_ productId: String, user: String) async throws -> SimulatedTransaction {
        let purchase = try await buy(productId, user: user)
        let answer = try await submit(purchase.signedTransaction, as: user)
        #expect(answer.status == 200, "\(answer.text)")
        _ = await appStore.drainNotifications()
        return purchase
    }

    // MARK: - User tokens

    /// A user token (HS256 JWT) for `user`, valid for an hour from the world's clock, signed with `secret`.
    func userToken(_ user: String, expiresIn seconds: Int64 = 3_600, secret: String = userSecret) throws -> String {
        let now = clock.now.millisecondsSince1970 / 1_000
        return try Self.jwt(#"{"sub":"\#(user)","iat":\#(now),"exp":\#(now + seconds)}"#, secret: secret)
    }

    /// A compact HS256 JWS of these claims as written.
    static func jwt(_ claims: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#, secret: String) throws
        -> String
    {
        let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        let code = try HMACSHA256(key: Array(secret.utf8)).authenticationCode(for: Array(input.utf8))
        return input + "." + base64URL(code)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    // MARK: - What the operator sees

    /// Every event as the JSON line an event log would hold.
    var eventLog: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return events.events.map { String(decoding: (try? encoder.encode($0)) ?? Data(), as: UTF8.self) }
            .joined(separator: "\n")
    }
}
