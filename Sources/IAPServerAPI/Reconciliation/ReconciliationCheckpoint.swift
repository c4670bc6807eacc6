#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// How far a customer was reconciled: the revisions of Apple's transaction and refund histories to go on from.
public struct ReconciliationCheckpoint: Codable, Sendable, Hashable {
    /// The customer: the original transaction id the reconciliation was keyed by.
    public var customerKey: String
    /// The `revision` of the last transaction history page, to ask only for what changed since.
    public var historyRevision: String?
    /// The `revision` of the last refund history page.
    public var refundRevision: String?
    /// When the reconciliation that saved it finished.
    public var reconciledAt: Date

    /// Creates a checkpoint.
    ///
    /// - Parameters:
    ///   - customerKey: The original transaction id the reconciliation was keyed by.
    ///   - historyRevision: The last transaction history revision.
    ///   - refundRevision: The last refund history revision.
    ///   - reconciledAt: When the reconciliation finished.
    public init(customerKey: String, historyRevision: String?, refundRevision: String?, reconciledAt: Date) {
        self.customerKey = customerKey
        self.historyRevision = historyRevision
        self.refundRevision = refundRevision
        self.reconciledAt = reconciledAt
    }

    /// Whether it replaces a stored checkpoint, as ``ReconciliationCheckpointStore`` requires: when there is none,
    /// or when it was reconciled at the same millisecond or later.
    ///
    /// - Parameter stored: The customer's stored checkpoint, if any.
    /// - Returns: Whether to store this one in its place.
    package func replaces(_ stored: ReconciliationCheckpoint?) -> Bool {
        guard let stored else {
            return true
        }
        return reconciledAt.millisecondsSince1970 >= stored.reconciledAt.millisecondsSince1970
    }
}
