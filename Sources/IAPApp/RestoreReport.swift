public import IAPCore
/// What ``PurchaseCoordinator/restore()`` found and did.
public struct RestoreReport: Sendable, Hashable {
    /// The account's current entitlements (newest copy of each), from the store.
    public var entitlements: [PurchaseHistoryItem]
    /// The transactions submitted to the server because it had not confirmed them to this device.
    public var submitted: [String]
    /// The results of those submissions that did not settle.
    public var failures: [String: IAPError]
}
