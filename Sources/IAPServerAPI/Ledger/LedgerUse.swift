/// Who delivers from a ledger, for the claim policy that suits it (``LedgerSite/retryPolicy(for:)``).
public enum LedgerUse: Sendable, Hashable {
    /// A long-running server (`iap serve`): its delivery claims hold ``serverClaimDuration``, longer than a webhook
    /// call may take and short enough that what a killed server was delivering is picked up again soon after it
    /// restarts.
    case server
    /// One command that delivers and exits (`iap ledger ingest`, `iap reconcile`, `iap support lookup-order
    /// --redeliver`).
    case command

    /// How long a server's delivery claim holds: 30 seconds (a webhook call's timeout is 10).
    public static let serverClaimDuration: Duration = .seconds(30)
}
