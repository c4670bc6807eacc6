#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A device watching its account's transactions in ``SimulatedAppStore``.
struct SimulatedTransactionObserver: Sendable {
    /// The account watched.
    let account: String
    /// The device watching: its own purchases are not sent to it.
    let device: UUID
    /// Where the signed transactions go.
    let continuation: AsyncStream<String>.Continuation
    /// The account's modification count up to which changes were sent.
    var cursor: UInt64
    /// Changes this device made itself (the transaction a purchase returned), by transaction id and the
    /// modification count of that change: StoreKit does not send them through the updates.
    var ownChanges: [String: UInt64] = [:]
}
