/// What sandbox purchases get on a production server: a ``DeliveryPipeline`` whose verifier accepts Production data
/// (``Verifier/acceptedEnvironments``) and, for App Review, Sandbox data too.
///
/// App Review tests a production build with sandbox accounts: its purchases are signed in the `Sandbox`
/// environment and reach the production server. A server that refuses them gets its app rejected (guideline 2.1),
/// so the default grants them. Every ledger entry keeps its environment (``LedgerEntry/environment``) and the hook
/// sees it (``Delivery/environment``), so sandbox purchases stay apart from real revenue whatever the policy.
///
/// The policy covers transactions of every environment other than Production (Sandbox above all; Xcode and
/// LocalTesting data only reach a verifier that accepts them knowingly). It decides only whether a purchase is
/// recorded and granted the first time; a sandbox purchase the ledger already holds is kept up to date (a refund is
/// still taken back). On a server whose verifier accepts no Production data (a staging server), it does not apply.
/// A verifier that does not say what it accepts (``Verifier/acceptedEnvironments`` is `nil`) counts as production.
public enum SandboxPolicy: String, Sendable, Hashable, CaseIterable {
    /// Grant sandbox purchases like any other: what App Review needs. The default.
    case grant
    /// Grant them, and flag each one for the operator: an ``IAPEvent`` `delivery.sandboxFlagged` when it is
    /// recorded, ``Delivery/isFlagged`` for the hook, and ``DeliveryPipeline/isFlagged(_:)`` for any entry.
    case grantAndFlag
    /// Refuse them: nothing is recorded, the outcome is ``DeliveryOutcome/rejected(_:)`` with
    /// ``IAPError/Code/sandboxPurchaseRefused`` (the app sees a rejection with a neutral message), and an
    /// ``IAPEvent`` `delivery.sandboxRefused` tells the operator. App Review's purchases fail too: choose it only
    /// for an app that sells nothing during review.
    case refuse
}
