import Foundation
import IAPApp
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting
import Testing

/// The app side and the server side of a shop, with the simulated App Store between them: devices
/// (`SimulatedStoreClient`), coordinators, an HTTP server answering `POST /iap/v1/transactions` in process, its
/// pipeline, ledger and wallet.
struct AppWorld {
    static let bundleId = "com.example.app"
    static let coins = "coins.100"
    static let premium = "pro.lifetime"
    static let season = "season.pass"
    static let monthly = "plus.monthly"

    let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
    let appStore: SimulatedAppStore
    let catalog: StaticProductCatalog
    let ledger = InMemoryEntitlementStore()
    let wallet = RecordingFulfillmentHook()
    let pipeline: DeliveryPipeline
    let handler: TransactionSubmissionHandler
    /// The server, reached over HTTP in process; `hang` makes it never answer.
    let transport: InProcessTransport
    let hang = Switch()
    /// The server's sessions: when it holds a token, requests without it are answered 401 (or 403).
    let sessions = SessionGate()
    let directory: String

    init(
        serverBundleId: String = AppWorld.bundleId,
        configure: (inout SimulatedAppStore.Configuration) -> Void = { _ in }
    ) throws {
        catalog = try StaticProductCatalog(products: [
            CatalogProduct(productId: Self.coins, kind: .consumable, entitlements: [], unitsPerPurchase: 100),
            CatalogProduct(productId: Self.premium, kind: .nonConsumable, entitlements: ["pro"]),
            CatalogProduct(
                productId: Self.season,
                kind: .nonRenewing,
                entitlements: ["season"],
                duration: SubscriptionPeriod(value: 3, unit: .month)
            ),
            CatalogProduct(
                productId: Self.monthly,
                kind: .autoRenewable,
                subscriptionGroupId: "plus",
                groupLevel: 1,
                entitlements: ["plus"],
                duration: SubscriptionPeriod(value: 1, unit: .month)
            ),
        ])
        var storeConfiguration = SimulatedAppStore.Configuration(bundleId: Self.bundleId)
        configure(&storeConfiguration)
        appStore = try SimulatedAppStore(
            products: catalog.products,
            configuration: storeConfiguration,
            clock: clock
        )
        var serverConfiguration = appStore.verifierConfiguration
        serverConfiguration.bundleId = serverBundleId
        let verifier = try AppStoreSignedDataVerifier(configuration: serverConfiguration)
        pipeline = DeliveryPipeline(
            verifier: verifier,
            catalog: catalog,
            store: ledger,
            hook: wallet,
            clock: clock,
            retryPolicy: RetryPolicy(jitter: 0)
        )
        // The test world's server authenticates nobody: the app's body names the user.
        let handler = TransactionSubmissionHandler(pipeline: pipeline, authentication: .trustBodyUserId)
        self.handler = handler
        let hang = self.hang
        let sessions = self.sessions
        transport = InProcessTransport { request in
            if hang.isOn {
                try await Task.sleep(for: .seconds(600))
            }
            if let refusal = sessions.refusal(of: request) {
                return refusal
            }
            let response = await handler.handle(body: request.body ?? Data(), authenticatedUserId: nil)
            return HTTPResponse(
                status: response.status,
                headers: ["Content-Type": TransactionSubmissionResponse.contentType],
                body: response.body
            )
        }
        directory = NSTemporaryDirectory() + "swift-iap-app-" + UUID().uuidString
    }

    /// The file outbox of one app install.
    func outboxFile(_ name: String = "outbox.json") -> FilePurchaseOutboxStorage {
        FilePurchaseOutboxStorage(path: directory + "/" + name)
    }

    func delivery() -> HTTPDeliveryClient {
        HTTPDeliveryClient(
            baseURL: URL(string: "https://api.example.com/")!,
            transport: transport,
            headers: ["Authorization": "Bearer app-token"]
        )
    }

    /// A client whose headers come from `provider`, called for every request.
    func delivery(headers provider: @escaping HTTPDeliveryClient.HeaderProvider) -> HTTPDeliveryClient {
        HTTPDeliveryClient(baseURL: URL(string: "https://api.example.com/")!, transport: transport, headers: provider)
    }

    /// The submissions the server received, decoded.
    var submissions: [TransactionSubmission] {
        transport.requests.compactMap { request in
            request.body.flatMap { try? JSONDecoder().decode(TransactionSubmission.self, from: $0) }
        }
    }

    static let configuration = PurchaseCoordinator.Configuration(
        bundleId: AppWorld.bundleId,
        environment: .sandbox,
        appVersion: "2.4.1",
        retryPolicy: RetryPolicy(
            initialDelay: .seconds(10),
            maximumDelay: .seconds(600),
            maximumAttempts: .max,
            jitter: 0
        )
    )

    /// Launches the app on a device: a coordinator started for a signed-in user.
    func launch(
        on device: SimulatedStoreClient,
        outbox: some PurchaseOutboxStorage,
        user: String? = "alice"
    ) async throws -> PurchaseCoordinator {
        let coordinator = PurchaseCoordinator(
            store: device,
            delivery: delivery(),
            outbox: outbox,
            configuration: Self.configuration,
            clock: clock
        )
        await coordinator.start(signedInUser: user)
        return coordinator
    }

    func transactions(of account: String) async throws -> [SimulatedAppStore.AccountTransaction] {
        try await appStore.accountTransactions(ofAccount: account)
    }

    func isFinished(_ transactionId: String, account: String = "alice") async throws -> Bool {
        try await transactions(of: account).first { $0.transaction.transactionId == transactionId }?.isFinished
            ?? false
    }

    /// The grants the wallet applied, by idempotency key.
    var grants: [Delivery] {
        wallet.applied.values.filter { $0.action == .grant }.sorted { $0.transactionId < $1.transactionId }
    }

    var revokes: [Delivery] {
        wallet.applied.values.filter { $0.action == .revoke }
    }
}

/// The server's sign-in: once it requires a token, a request without `Authorization: Bearer <token>` is answered
/// with the refusal status (401 for an expired session, 403 for a forbidden one).
final class SessionGate: Sendable {
    private let state = LockedValue<(token: String?, status: Int)>((nil, 401))

    /// Requires `token` from now on, refusing others with `status`; `nil` accepts every request.
    func require(_ token: String?, refusingWith status: Int = 401) {
        state.withLock { $0 = (token, status) }
    }

    /// The refusal of a request without the required token, or `nil` to let it through.
    func refusal(of request: HTTPRequest) -> HTTPResponse? {
        let (token, status) = state.withLock { $0 }
        guard let token, request.headers["Authorization"] != "Bearer \(token)" else { return nil }
        return HTTPResponse(
            status: status,
            headers: ["Content-Type": "application/json"],
            body: Data(#"{"error":"the session has expired"}"#.utf8)
        )
    }
}

/// A switch a test flips while another task reads it.
final class Switch: Sendable {
    private let state = LockedValue(false)

    var isOn: Bool { state.withLock { $0 } }

    func set(_ on: Bool) {
        state.withLock { $0 = on }
    }
}

/// Waits until `condition` holds, checking every few milliseconds, for up to a minute.
///
/// The wait ends as soon as the condition holds (milliseconds, normally). The limit is generous because the whole
/// suite runs in parallel on two cores next to tests that wait for child processes, which can hold the
/// cooperative threads for seconds.
func eventually(
    _ what: String,
    timeout: Duration = .seconds(60),
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if try await condition() {
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("timed out waiting until \(what)")
    throw CancellationError()
}

/// A test's device that forwards every call to a simulated device, but for the calls it overrides.
protocol ForwardingStoreClient: StoreClient {
    var device: SimulatedStoreClient { get }
}

extension ForwardingStoreClient {
    func products(for productIds: Set<String>) async throws -> [StoreProduct] {
        try await device.products(for: productIds)
    }

    func purchase(productId: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
        try await device.purchase(productId: productId, options: options)
    }

    func transactionUpdates() -> AsyncStream<String> { device.transactionUpdates() }

    func unfinishedTransactions() async throws -> [String] { try await device.unfinishedTransactions() }

    func allTransactions() async throws -> [String] { try await device.allTransactions() }

    func currentEntitlements() async throws -> [String] { try await device.currentEntitlements() }

    func latestTransaction(for productId: String) async throws -> String? {
        try await device.latestTransaction(for: productId)
    }

    func subscriptionStatuses(groupId: String) async throws -> [StoreSubscriptionStatus] {
        try await device.subscriptionStatuses(groupId: groupId)
    }

    func appTransaction(refresh: Bool) async throws -> String { try await device.appTransaction(refresh: refresh) }

    func finish(transactionId: String) async throws { try await device.finish(transactionId: transactionId) }

    func sync() async throws { try await device.sync() }

    func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
        try await device.requestRefund(transactionId: transactionId)
    }

    func showManageSubscriptions(groupId: String?) async throws {
        try await device.showManageSubscriptions(groupId: groupId)
    }

    func presentOfferCodeRedemption() async throws { try await device.presentOfferCodeRedemption() }
}

/// A device whose updates the test sends itself, to order them against other calls; everything else is the
/// simulated device's.
struct ScriptedUpdatesStoreClient: ForwardingStoreClient {
    let device: SimulatedStoreClient
    let updates: AsyncStream<String>
    let continuation: AsyncStream<String>.Continuation

    init(device: SimulatedStoreClient) {
        self.device = device
        (updates, continuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Sends a signed transaction through the updates.
    func send(_ signedTransaction: String) {
        continuation.yield(signedTransaction)
    }

    func transactionUpdates() -> AsyncStream<String> { updates }
}

/// A device whose refund sheet stays open while `whileSheetIsOpen` runs; everything else is the simulated
/// device's.
struct RefundSheetStoreClient: ForwardingStoreClient {
    let device: SimulatedStoreClient
    let whileSheetIsOpen: @Sendable (String) async throws -> Void

    func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
        let status = try await device.requestRefund(transactionId: transactionId)
        try await whileSheetIsOpen(transactionId)
        return status
    }
}

/// A value set once by the test and read by a task it started.
final class Box<Value: Sendable>: Sendable {
    private let state = LockedValue<Value?>(nil)

    var value: Value? { state.withLock { $0 } }

    func set(_ value: Value) {
        state.withLock { $0 = value }
    }
}
