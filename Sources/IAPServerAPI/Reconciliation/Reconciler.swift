#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// Compares Apple's record of a customer's purchases with the ledger and repairs the ledger in both directions:
/// delivers what Apple sold but the server never heard of (a lost order), takes back what Apple refunded but the
/// server missed (a lost refund notification), and records the renewal state of each subscription (a lost
/// `DID_FAIL_TO_RENEW` would otherwise end a subscriber's access at the expiry date, in the middle of the billing
/// grace period).
///
/// For one customer, the reconciler pages through Apple's transaction history and refund history (App Store Server
/// API), starting from the revisions a ``ReconciliationCheckpointStore`` kept from the last run, so that a run asks
/// only for what changed since (a saved revision that Apple refuses is dropped, and that history read whole). It
/// verifies every signed transaction with the ``Verifier``; delivers what the ledger lacks through the
/// ``DeliveryPipeline`` (idempotently: the owner comes from the ledger and the appAccountToken binding, as for a
/// notification); applies Apple's newer data to what the ledger has (both through
/// ``DeliveryPipeline/deliver(_:signedTransaction:userId:orderId:)``, which takes back a refund once). For a customer with an
/// auto-renewable subscription it then asks Get All Subscription Statuses and records, for each subscription, the
/// newest signed transaction (through the pipeline) and renewal info (``EntitlementStore/storeRenewalInfo(_:)``):
/// newer `signedDate` wins, so nothing goes back in time. It answers a ``ReconciliationReport``, and raises the alarm
/// when the ledger had missed more than ``Configuration/alarmThreshold`` things (``ReconciliationReport/discrepancies``).
///
/// Each customer is asked of the App Store Server API of its own environment: the ledger keeps each transaction's
/// environment, and ``AppStoreServerAPIClients`` holds one client per environment (an App Review purchase on a
/// production server is a Sandbox transaction, which only the Sandbox API knows). A transaction the ledger does not
/// know is asked of each client in turn, first to last, until one knows it.
///
/// Four ways in:
/// - one customer, by any transaction id or by user id: ``reconcile(transactionId:)``, ``reconcile(userId:)``;
/// - every customer in the ledger, with progress and a rate limit: ``reconcileLedger(progress:)``;
/// - every subscription the ledger believes live (active, in its grace period, in billing retry, or due to renew),
///   by its statuses only, cheap enough to run hourly: ``reconcileSubscriptions(progress:)``;
/// - client-driven: the app uploads every signed transaction it holds (StoreKit's `Transaction.all`):
///   ``reconcileUpload(_:userId:)``.
///
/// Safe to run again at any time, and concurrently with the pipeline and the notification processor: every
/// change goes through the pipeline's compare-and-set, so nothing is granted or taken back twice. Requests to Apple
/// are spaced by ``Configuration/requestsPerSecond`` on the injected `Swift.Clock`.
public actor Reconciler {
    /// How the reconciler runs.
    public struct Configuration: Sendable, Hashable {
        /// The alarm fires when a run finds that the ledger had missed more than this many things
        /// (``ReconciliationReport/discrepancy``). `0` alarms on anything missed.
        public var alarmThreshold: Int
        /// The most App Store Server API requests per second, across every run of this reconciler; `0` or less
        /// does not pace.
        public var requestsPerSecond: Double
        /// How many purchase families one page of the ledger walk reads.
        public var ledgerPageSize: Int
        /// Whether a customer with an auto-renewable subscription is also asked Get All Subscription Statuses, to
        /// record the newest renewal info and transaction of each subscription. On by default.
        public var resyncsSubscriptions: Bool
        /// How long after its expiry date a subscription whose renewal the ledger expected (auto-renew on) still
        /// counts as live: the ledger cannot tell a lost `DID_RENEW` or `DID_FAIL_TO_RENEW` from an expiry until it
        /// asks. 60 days by default, the longest billing retry.
        public var renewalOverdueWindow: Duration
        /// On a ledger of several apps, the apps (bundle ids) whose purchase families the walks of the whole ledger
        /// (``Reconciler/reconcileLedger(progress:)``, ``Reconciler/reconcileSubscriptions(progress:)``) and of a
        /// user (``Reconciler/reconcile(userId:)``) visit: another app's are counted in
        /// ``LedgerReconciliationSummary/otherApps`` and left alone, since only their own app's API knows them.
        /// `nil` (the default): the apps of clients made per app (``AppStoreServerAPIClients/bundleIds``), else every
        /// family.
        public var apps: Set<String>?
        /// How many Apple accounts and purchase families a walk of the whole ledger remembers as already answered for,
        /// of each kind (accounts, families, subscriptions), the most recent ones: its memory stays bounded however
        /// large the ledger. A later family of an account the walk forgot costs one more history request, which
        /// changes nothing already settled. 100,000 by default.
        public var coverageLimit: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - alarmThreshold: The most discrepancies that raise no alarm.
        ///   - requestsPerSecond: The most requests per second to Apple.
        ///   - ledgerPageSize: Families per page of the ledger walk.
        ///   - resyncsSubscriptions: Whether subscription statuses are asked too.
        ///   - renewalOverdueWindow: How long an overdue renewal keeps a subscription live.
        ///   - coverageLimit: How many accounts and families of each kind a walk remembers as answered for.
        public init(
            alarmThreshold: Int = 0,
            requestsPerSecond: Double = 10,
            ledgerPageSize: Int = 500,
            resyncsSubscriptions: Bool = true,
            renewalOverdueWindow: Duration = .seconds(60 * 86_400),
            coverageLimit: Int = 100_000
        ) {
            self.alarmThreshold = alarmThreshold
            self.requestsPerSecond = requestsPerSecond
            self.ledgerPageSize = ledgerPageSize
            self.resyncsSubscriptions = resyncsSubscriptions
            self.renewalOverdueWindow = renewalOverdueWindow
            self.apps = nil
            self.coverageLimit = coverageLimit
        }
    }

    /// The configuration.
    public nonisolated let configuration: Configuration

    let clients: AppStoreServerAPIClients
    let pipeline: DeliveryPipeline
    let checkpoints: (any ReconciliationCheckpointStore)?
    let pacer: any RequestPacing
    let alarm: (@Sendable (ReconciliationAlarm) async -> Void)?
    var verifier: any Verifier { pipeline.verifier }
    var store: any EntitlementStore { pipeline.store }
    var wallClock: any WallClock { pipeline.clock }
    var events: any EventSink { pipeline.events }

    /// Creates a reconciler.
    ///
    /// - Parameters:
    ///   - clients: The App Store Server API clients of the app, one per environment its ledger holds.
    ///   - pipeline: Delivers and takes back; its verifier checks what Apple answers, its store is the ledger walked
    ///     and repaired, its clock dates the checkpoints and decides what counts as live, and its event sink hears
    ///     of each customer's visit, each discrepancy, each failure and each signed data that did not verify
    ///     (`reconciliation.customer`, `reconciliation.discrepancy`, `reconciliation.failed`,
    ///     `reconciliation.rejected`), and each alarm (`reconciliation.alarm`).
    ///   - checkpoints: Where each customer's revisions are kept between runs; `nil` keeps none, so that every run
    ///     reads every customer's whole history.
    ///   - configuration: Alarm threshold, rate limit, page size, subscription statuses.
    ///   - clock: The clock the rate limit sleeps on (tests pass one that does not wait).
    ///   - alarm: Called when a run's discrepancies exceed the threshold.
    public init(
        clients: AppStoreServerAPIClients,
        pipeline: DeliveryPipeline,
        checkpoints: (any ReconciliationCheckpointStore)?,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        alarm: (@Sendable (ReconciliationAlarm) async -> Void)? = nil
    ) {
        self.clients = clients
        self.pipeline = pipeline
        self.checkpoints = checkpoints
        self.configuration = configuration
        self.pacer = makeRequestPacer(clock: clock, requestsPerSecond: configuration.requestsPerSecond)
        self.alarm = alarm
    }

    /// Creates a reconciler with one App Store Server API client: for a ledger of one environment.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client of the app.
    ///   - pipeline: Delivers and takes back, verifies, and hears of what happens (see
    ///     ``init(clients:pipeline:checkpoints:configuration:clock:alarm:)``).
    ///   - checkpoints: Where each customer's revisions are kept; `nil` keeps none.
    ///   - configuration: Alarm threshold, rate limit, page size, subscription statuses.
    ///   - clock: The clock the rate limit sleeps on (tests pass one that does not wait).
    ///   - alarm: Called when a run's discrepancies exceed the threshold.
    public init(
        client: AppStoreServerAPIClient,
        pipeline: DeliveryPipeline,
        checkpoints: (any ReconciliationCheckpointStore)?,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        alarm: (@Sendable (ReconciliationAlarm) async -> Void)? = nil
    ) {
        self.init(
            clients: AppStoreServerAPIClients(client),
            pipeline: pipeline,
            checkpoints: checkpoints,
            configuration: configuration,
            clock: clock,
            alarm: alarm
        )
    }
}
