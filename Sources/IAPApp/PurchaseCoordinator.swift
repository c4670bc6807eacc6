#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The app's one entry point to in-app purchases: it buys through the device's ``StoreClient``, hands every signed
/// transaction to the server through a ``DeliveryClient``, and finishes the store's transaction only after the
/// server confirmed delivery — so that no order is ever lost between the App Store and the server.
///
/// - Products are loaded through a cache that expires (``Configuration/productCacheLifetime``); ids the store does
///   not know are reported with the bundle id, environment and app version needed to fix them.
/// - A purchase saves its context (user, business order id, appAccountToken) before the store is asked, and the
///   signed transaction in the outbox before the server is asked. The outbox (a ``PurchaseOutboxStorage``) is
///   drained at ``start(signedInUser:)``, after each delivered purchase and on ``drainOutbox(force:)``, with
///   backoff (``Configuration/retryPolicy``). Nothing leaves it before the server confirmed.
/// - The updates listener, started once by ``start(signedInUser:)``, sends renewals, Ask to Buy approvals,
///   refunds, purchases from other devices and the unfinished transactions of an earlier run down the same path.
///   Their user comes from the purchase's saved context, the appAccountToken's owner, or the signed-in user —
///   unless tokens are derived (``AppAccountToken/derive(from:namespace:)``) and this one is not derived from
///   the signed-in user: the server then resolves the owner from the token's binding.
/// - ``restore()`` syncs, then submits the current entitlements the server has not confirmed to this device.
/// - ``requestRefund(transactionId:)`` marks the purchase "refund requested" until the revocation arrives.
/// - ``history(for:after:limit:)`` pages the order history, newest first, from a local cache kept up to date by
///   every purchase and update.
///
/// ```swift
/// let coordinator = PurchaseCoordinator(
///     store: StoreKitStoreClient(),
///     delivery: HTTPDeliveryClient(baseURL: api, transport: URLSessionTransport()),
///     outbox: FilePurchaseOutboxStorage(path: outboxPath),
///     configuration: .init(bundleId: "com.example.app", environment: .production, appVersion: "2.4")
/// )
/// try await coordinator.start(signedInUser: account.userId)   // at launch
/// switch await coordinator.purchase(productId: "coins.100", for: account.userId, orderId: order.id) { ... }
/// ```
public actor PurchaseCoordinator {
    /// What the coordinator needs to know about the app.
    public struct Configuration: Sendable, Hashable {
        /// The app's bundle id, for error reports.
        public var bundleId: String
        /// The App Store environment the app runs against, for error reports.
        public var environment: AppStoreEnvironment
        /// The app's version, for error reports.
        public var appVersion: String
        /// How long a loaded product is used before it is loaded again.
        public var productCacheLifetime: Duration
        /// The backoff of outbox submissions. The attempts are never exhausted: an entry stays until the server
        /// confirms it, waiting at most ``RetryPolicy/maximumDelay`` between automatic attempts.
        public var retryPolicy: RetryPolicy
        /// When set, each user's appAccountToken is derived from the user id in this namespace, so the server can
        /// derive it too; otherwise each purchase gets a random token whose owner the coordinator remembers.
        public var appAccountTokenNamespace: UUID?
        /// How long a started purchase that never produced a transaction (a declined Ask to Buy, say) keeps its
        /// context.
        public var intentLifetime: Duration

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - bundleId: The app's bundle id.
        ///   - environment: The App Store environment.
        ///   - appVersion: The app's version.
        ///   - productCacheLifetime: How long a loaded product is used.
        ///   - retryPolicy: The backoff of outbox submissions.
        ///   - appAccountTokenNamespace: The namespace to derive users' appAccountTokens in, if any.
        ///   - intentLifetime: How long a started purchase keeps its context.
        public init(
            bundleId: String,
            environment: AppStoreEnvironment,
            appVersion: String,
            productCacheLifetime: Duration = .seconds(3_600),
            retryPolicy: RetryPolicy = RetryPolicy(
                initialDelay: .seconds(10),
                maximumDelay: .seconds(3_600),
                maximumAttempts: .max
            ),
            appAccountTokenNamespace: UUID? = nil,
            intentLifetime: Duration = .seconds(30 * 86_400)
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.appVersion = appVersion
            self.productCacheLifetime = productCacheLifetime
            self.retryPolicy = retryPolicy
            self.appAccountTokenNamespace = appAccountTokenNamespace
            self.intentLifetime = intentLifetime
        }
    }

    /// The configuration.
    public nonisolated let configuration: Configuration

    let store: any StoreClient
    let delivery: any DeliveryClient
    let storage: any PurchaseOutboxStorage
    let clock: any WallClock
    let retryPolicy: RetryPolicy

    /// The saved state; meaningful only once `loaded`.
    var outbox = PurchaseOutbox()
    var loaded = false
    /// Bumped by every change of `outbox`; `savedRevision` is the last one made durable.
    var revision = 0
    var savedRevision = 0
    var saving: Task<Void, any Error>?

    var signedInUser: String?
    var productCache: [String: (product: StoreProduct, loadedAt: Date)] = [:]
    var listener: Task<Void, Never>?
    /// Transactions being submitted right now.
    var inFlight: Set<String> = []
    var subscribers: [UUID: AsyncStream<PurchaseEvent>.Continuation] = [:]

    /// Creates a coordinator. Call ``start(signedInUser:)`` at launch.
    ///
    /// - Parameters:
    ///   - store: The device's store.
    ///   - delivery: The way to the server.
    ///   - outbox: Where unconfirmed purchases are kept.
    ///   - configuration: What the coordinator needs to know about the app.
    ///   - clock: The wall clock for product expiry, backoff and timestamps.
    public init(
        store: some StoreClient,
        delivery: some DeliveryClient,
        outbox: some PurchaseOutboxStorage,
        configuration: Configuration,
        clock: some WallClock = SystemClock()
    ) {
        self.store = store
        self.delivery = delivery
        self.storage = outbox
        self.configuration = configuration
        self.clock = clock
        self.retryPolicy = configuration.retryPolicy.validated()
    }

    deinit {
        listener?.cancel()
        for continuation in subscribers.values {
            continuation.finish()
        }
    }

    // MARK: - Life cycle

    /// Starts the coordinator at launch: reads the outbox, starts the updates listener (once), and submits every
    /// purchase in the outbox, backoff or not.
    ///
    /// Call it as early as possible, before any purchase: the store hands the unfinished transactions of earlier
    /// runs to the listener right away.
    ///
    /// - Parameter signedInUser: The business user signed in to the app, if any; the owner of updates nothing
    ///   else names.
    /// - Throws: ``IAPError`` `.storageCorrupted` when the outbox is damaged (it is left as it is, and the
    ///   listener is not started), `.storageFailure` when it cannot be read.
    public func start(signedInUser: String?) async throws {
        self.signedInUser = signedInUser
        try await loadIfNeeded()
        if listener == nil {
            let updates = store.transactionUpdates()
            listener = Task { [weak self] in
                for await signedTransaction in updates {
                    guard let self else { return }
                    await self.handleUpdate(signedTransaction)
                }
            }
        }
        _ = try await drainOutbox(force: true)
    }

    /// Stops the updates listener and ends every event stream. The outbox stays as it is.
    public func stop() {
        listener?.cancel()
        listener = nil
        for continuation in subscribers.values {
            continuation.finish()
        }
        subscribers.removeAll()
    }

    /// Changes the signed-in user, the owner of updates nothing else names.
    ///
    /// - Parameter user: The business user, or `nil` when nobody is signed in.
    public func signIn(_ user: String?) {
        signedInUser = user
    }

    /// A stream of what happens to purchases from now on, for the interface.
    ///
    /// - Returns: A new stream; it ends when the coordinator stops.
    public func events() -> AsyncStream<PurchaseEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PurchaseEvent.self)
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    /// The purchases the server has not confirmed yet, oldest first.
    ///
    /// - Returns: The outbox entries.
    /// - Throws: ``IAPError`` `.storageCorrupted` or `.storageFailure` when the outbox cannot be read.
    public func pendingDeliveries() async throws -> [PurchaseOutboxEntry] {
        try await loadIfNeeded()
        return outbox.entries.values.sorted { ($0.enqueuedAt, $0.transactionId) < ($1.enqueuedAt, $1.transactionId) }
    }

    // MARK: - State

    private func unsubscribe(_ id: UUID) {
        subscribers[id] = nil
    }

    func emit(_ event: PurchaseEvent) {
        for continuation in subscribers.values {
            continuation.yield(event)
        }
    }

    /// Reads the outbox once; a damaged one is reported every time and never overwritten.
    func loadIfNeeded() async throws {
        guard !loaded else { return }
        let data: Data?
        do {
            data = try await storage.load()
        } catch {
            throw IAPError.wrapping(error, as: .storageFailure, "reading the purchase outbox failed")
        }
        var state = PurchaseOutbox()
        if let data {
            state = try PurchaseOutbox.decode(data, source: "\(type(of: storage))")
        }
        guard !loaded else { return }
        let oldest = clock.now.addingTimeInterval(-configuration.intentLifetime.timeInterval)
        state.intents.removeAll { $0.createdAt < oldest }
        outbox = state
        loaded = true
    }

    /// Records that `outbox` changed.
    func changed() {
        revision += 1
    }

    /// Makes every change made so far durable; saves run one at a time, each with the whole state.
    func persist() async throws {
        let target = revision
        while savedRevision < target {
            if let inProgress = saving {
                _ = await inProgress.result
                // Whoever resumes first clears the finished save, so nobody waits on it again.
                if saving == inProgress {
                    saving = nil
                }
                continue
            }
            let snapshotRevision = revision
            let data = try outbox.encoded()
            let storage = self.storage
            let task = Task { try await storage.save(data) }
            saving = task
            let result = await task.result
            if saving == task {
                saving = nil
            }
            switch result {
            case .success:
                savedRevision = max(savedRevision, snapshotRevision)
            case .failure(let error):
                throw IAPError.wrapping(error, as: .storageFailure, "saving the purchase outbox failed")
            }
        }
    }
}
