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
///   drained at ``start(signedInUser:)``, after each delivered purchase, on ``sweep(force:)``, ``signIn(_:)`` and
///   ``drainOutbox(force:)``, with backoff (``Configuration/retryPolicy``). Nothing leaves it before the server
///   confirmed.
/// - The outbox cannot stop purchases: one that cannot be read (damaged, or written by a newer version of the app)
///   is moved aside, kept for support, and reported (``PurchaseEvent/outboxQuarantined(_:)``, ``outboxStatus()``);
///   the coordinator goes on with an empty one, and the store hands the unfinished purchases it held to the app
///   again. Storage that can be neither read nor moved aside leaves the outbox in memory for this run.
/// - ``sweep(force:)``, at launch and whenever the app becomes active, submits the store's unfinished transactions
///   the outbox does not hold (a purchase made by StoreKit's own views, an update missed while the app was
///   suspended) and drains the outbox.
/// - A server that answers 401 or 403 (an expired session) leaves the purchase unfinished in the outbox: the result
///   is ``PurchaseResult/PendingReason/authenticationRequired(transactionId:)``, and ``signIn(_:)`` delivers it.
/// - The updates listener, started once by ``start(signedInUser:)``, sends renewals, Ask to Buy approvals,
///   refunds, purchases from other devices and the unfinished transactions of an earlier run down the same path.
///   Their user comes from the purchase's saved context, the appAccountToken's owner, or the signed-in user —
///   unless tokens are derived (``AppAccountToken/derive(from:namespace:)``) and this one is not derived from
///   the signed-in user: the server then resolves the owner from the token's binding.
/// - ``restore()`` syncs, then submits the current entitlements the server has not confirmed to this device.
/// - ``requestRefund(transactionId:)`` marks the purchase "refund requested" until the revocation arrives.
/// - ``history(for:after:limit:)`` pages the order history, newest first, from a local cache kept up to date by
///   every purchase and update, with price and currency, and the Ask to Buy requests waiting for a parent.
/// - Offers: ``purchase(productId:for:orderId:options:)`` passes promotional offers the server signed, win-back
///   offers and the server's introductory offer eligibility to the store (``PurchaseOptions``).
/// - Subscriptions: ``subscriptionStatuses(groupId:)``, ``latestTransaction(for:)``, ``currentEntitlements()``,
///   ``showManageSubscriptions(groupId:)`` and ``presentOfferCodeRedemption()``; the app's own download:
///   ``appTransaction(refresh:)``.
///
/// ```swift
/// let coordinator = PurchaseCoordinator(
///     store: StoreKitStoreClient(),
///     delivery: HTTPDeliveryClient(baseURL: api, transport: URLSessionTransport()),
///     outbox: FilePurchaseOutboxStorage(path: outboxPath),
///     configuration: .init(bundleId: "com.example.app", environment: .production, appVersion: "2.4")
/// )
/// await coordinator.start(signedInUser: account.userId)   // at launch
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
        /// How long a purchase waiting for a parent's approval shows as a pending row of the history. Apple's Ask to
        /// Buy requests last 24 hours, and StoreKit never reports a decline.
        public var pendingApprovalLifetime: Duration
        /// Whether every submission carries the App Store's signed app transaction
        /// (``TransactionSubmission/signedAppTransaction``), which tells the server the customer's
        /// `appTransactionId` and original app version. Off by default: it adds a few kilobytes to each request, and
        /// the server must verify it before relying on it.
        public var sendsAppTransaction: Bool

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
        ///   - pendingApprovalLifetime: How long an Ask to Buy request shows as pending.
        ///   - sendsAppTransaction: Whether submissions carry the signed app transaction.
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
            intentLifetime: Duration = .seconds(30 * 86_400),
            pendingApprovalLifetime: Duration = .seconds(86_400),
            sendsAppTransaction: Bool = false
        ) {
            self.bundleId = bundleId
            self.environment = environment
            self.appVersion = appVersion
            self.productCacheLifetime = productCacheLifetime
            self.retryPolicy = retryPolicy
            self.appAccountTokenNamespace = appAccountTokenNamespace
            self.intentLifetime = intentLifetime
            self.pendingApprovalLifetime = pendingApprovalLifetime
            self.sendsAppTransaction = sendsAppTransaction
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
    /// The one load of the outbox, which every caller waits for.
    var loading: Task<Void, Never>?
    /// Whether the outbox is saved: `false` once its storage could be neither read nor moved aside, so that nothing
    /// overwrites what may still be readable later.
    var isDurable = true
    /// Why the storage could not be used, when `isDurable` is `false`.
    var unavailableError: IAPError?
    /// The signed app transaction, once read, for submissions (``Configuration/sendsAppTransaction``).
    var signedAppTransaction: String?
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

    /// Starts the coordinator at launch: reads the outbox (moving an unreadable one aside), starts the updates
    /// listener (once), and sweeps: submits the store's unfinished transactions the outbox does not hold, then every
    /// purchase in the outbox, backoff or not.
    ///
    /// Call it as early as possible, before any purchase: the store hands the unfinished transactions of earlier
    /// runs to the listener right away. It never fails: a damaged outbox, an unreachable store or server leave
    /// purchases working and are reported through ``events()`` and ``outboxStatus()``.
    ///
    /// - Parameter signedInUser: The business user signed in to the app, if any; the owner of updates nothing
    ///   else names.
    public func start(signedInUser: String?) async {
        self.signedInUser = signedInUser
        await loadIfNeeded()
        if listener == nil {
            let updates = store.transactionUpdates()
            listener = Task { [weak self] in
                for await signedTransaction in updates {
                    guard let self else { return }
                    await self.handleUpdate(signedTransaction)
                }
            }
        }
        _ = try? await sweep(force: true)
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

    /// Changes the signed-in user, the owner of updates nothing else names, and submits at once the purchases the
    /// server refused for want of a sign-in (it answered 401 or 403).
    ///
    /// Call it after the customer signs in again, once the ``HTTPDeliveryClient``'s header provider has the new
    /// credentials. It returns when those purchases were submitted.
    ///
    /// - Parameter user: The business user, or `nil` when nobody is signed in (nothing is submitted then).
    /// - Returns: What the submissions came to.
    @discardableResult
    public func signIn(_ user: String?) async -> OutboxDrainReport {
        signedInUser = user
        guard user != nil else { return OutboxDrainReport() }
        await loadIfNeeded()
        let waiting = sortedEntries().filter(\.isAwaitingAuthentication).map(\.transactionId)
        return await drain(waiting, force: true)
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
    public func pendingDeliveries() async -> [PurchaseOutboxEntry] {
        await loadIfNeeded()
        return sortedEntries()
    }

    /// The health of the outbox, for a diagnostics screen: whether it is kept on disk, the unreadable outboxes
    /// moved aside, and what waits for delivery or for a sign-in.
    ///
    /// - Returns: The status.
    public func outboxStatus() async -> OutboxStatus {
        await loadIfNeeded()
        return OutboxStatus(
            isDurable: isDurable,
            unavailableError: unavailableError,
            quarantines: outbox.quarantines,
            pendingDeliveries: outbox.entries.count,
            awaitingAuthentication: outbox.entries.values.filter(\.isAwaitingAuthentication).count
        )
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

    /// The outbox entries, oldest first.
    func sortedEntries() -> [PurchaseOutboxEntry] {
        outbox.entries.values.sorted { ($0.enqueuedAt, $0.transactionId) < ($1.enqueuedAt, $1.transactionId) }
    }

    /// Reads the outbox once; every caller waits for the same read.
    func loadIfNeeded() async {
        if loaded {
            return
        }
        if let loading {
            await loading.value
            return
        }
        let task = Task { await self.load() }
        loading = task
        await task.value
    }

    /// Reads the outbox. Bytes that cannot be read (damaged, or another format version) are moved aside and the
    /// coordinator starts empty; storage that fails, or cannot move them, leaves the outbox in memory, unsaved.
    private func load() async {
        var state = PurchaseOutbox()
        var quarantined = false
        do {
            if let data = try await storage.load() {
                state = try PurchaseOutbox.decode(data, source: "\(type(of: storage))")
            }
        } catch {
            let failure = IAPError.wrapping(error, as: .storageFailure, "reading the purchase outbox failed")
            if failure.code != .storageCorrupted {
                becomeUnavailable(failure)
            } else if let record = await moveAside(failure) {
                state.quarantines = [record]
                quarantined = true
                emit(.outboxQuarantined(record))
            }
        }
        let oldest = clock.now.addingTimeInterval(-configuration.intentLifetime.timeInterval)
        state.intents.removeAll { $0.createdAt < oldest }
        outbox = state
        loaded = true
        if quarantined {
            // A fresh outbox in the storage's place, with the record of what was moved aside.
            changed()
            try? await persist()
        }
    }

    /// Moves unreadable bytes aside; `nil` (and the outbox unavailable) when the storage cannot.
    private func moveAside(_ failure: IAPError) async -> OutboxQuarantine? {
        let now = clock.now
        do {
            let location = try await storage.quarantine(at: now)
            return OutboxQuarantine(location: location, date: now, error: failure)
        } catch {
            var reason = IAPError.wrapping(error, as: .storageFailure, "moving the unreadable outbox aside failed")
            reason.message += " (it could not be read: \(failure.message))"
            becomeUnavailable(reason)
            return nil
        }
    }

    /// Goes on with an outbox in memory only, never saved over what the storage holds.
    private func becomeUnavailable(_ error: IAPError) {
        isDurable = false
        unavailableError = error
        emit(.outboxUnavailable(error))
    }

    /// Records that `outbox` changed.
    func changed() {
        revision += 1
    }

    /// Makes every change made so far durable; saves run one at a time, each with the whole state. Without a usable
    /// storage (``OutboxStatus/isDurable``) the state stays in memory.
    func persist() async throws {
        guard isDurable else {
            savedRevision = revision
            return
        }
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
