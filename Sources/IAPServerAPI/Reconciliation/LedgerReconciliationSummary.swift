public import IAPCore
/// What a reconciliation of many customers did, in totals: a whole-ledger walk
/// (``Reconciler/reconcileLedger(progress:)``) or a walk of the live subscriptions
/// (``Reconciler/reconcileSubscriptions(progress:)``).
public struct LedgerReconciliationSummary: Sendable, Hashable {
    /// Purchase families the walk set out to visit: every family of the ledger, or every live subscription.
    public var families = 0
    /// Families reconciled with their own App Store history request.
    public var reconciled = 0
    /// Families skipped because an earlier customer's history already covered them (one Apple account, several
    /// purchase families).
    public var coveredByOthers = 0
    /// Families of other apps than those reconciled (``Reconciler/Configuration/apps``), left alone: on a ledger of
    /// several apps, each app's are reconciled with its own API.
    public var otherApps = 0
    /// App Store Server API pages fetched.
    public var requests = 0
    /// Apple's transactions with a valid signature.
    public var appleTransactions = 0
    /// Already settled.
    public var alreadyDelivered = 0
    /// Delivered now.
    public var deliveredNow = 0
    /// Taken back now.
    public var revokedNow = 0
    /// Recorded now for an owner to claim.
    public var awaitingOwner = 0
    /// Transactions that could not be settled, with their customer.
    public var stillFailing: [ReconciliationReport.Failure] = []
    /// Signed data that did not verify.
    public var rejectedSignatures = 0
    /// Get All Subscription Statuses requests made (one answers for every subscription of an Apple account).
    public var subscriptionStatusRequests = 0
    /// Subscriptions whose renewal state the newest signed renewal info changed, recorded now.
    public var renewalInfosUpdated = 0
    /// Things the ledger had missed (``ReconciliationReport/discrepancies``), over every customer.
    public var discrepancies = 0
    /// Families whose reconciliation failed as a whole (the API refused), by original transaction id.
    public var failedCustomers: [String: IAPError] = [:]
    /// Alarms raised.
    public var alarms = 0

    /// Creates an empty summary.
    public init() {}

    /// What failed: transactions that could not be settled, signed data that did not verify, and families whose
    /// reconciliation failed as a whole. A run to repeat when it is not `0`.
    public var failed: Int {
        stillFailing.count + rejectedSignatures + failedCustomers.count
    }

    mutating func add(_ report: ReconciliationReport) {
        reconciled += 1
        count(report)
    }

    /// Adds what a report found and repaired, without counting the family as reconciled (it failed part way).
    mutating func count(_ report: ReconciliationReport) {
        requests += report.requests
        appleTransactions += report.appleTransactions.count
        alreadyDelivered += report.alreadyDelivered.count
        deliveredNow += report.deliveredNow.count
        revokedNow += report.revokedNow.count
        awaitingOwner += report.awaitingOwner.count
        stillFailing += report.stillFailing
        rejectedSignatures += report.rejectedSignatures.count
        subscriptionStatusRequests += report.subscriptionStatusRequests
        renewalInfosUpdated += report.renewalInfosUpdated.count
        discrepancies += report.discrepancies.count
    }
}
