#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DeliveryPipeline {
    /// Withdraws the access of every purchase an Apple Account made in the app, as the app's server decides when a
    /// parent rescinds consent (`RESCIND_CONSENT`, whose signed app transaction names the account's
    /// `appTransactionId`): age-assurance rules require the minor's access to end.
    ///
    /// Each entry of the ledger with that `appTransactionId` (``EntitlementStore/entries(appTransactionId:)``) is
    /// marked (``LedgerEntry/consentRescindedAt``, and ``LedgerEntry/revokedAt`` when the App Store had not revoked
    /// it) and its grant taken back through the fulfillment, as a refund's is, retried the same way. It stays
    /// withdrawn whatever the App Store later signs about it, and a renewal of the same subscription is recorded
    /// withdrawn and never granted. A new purchase (the account's parent consented again) is granted as usual. An
    /// entry marked before is left alone, so a replay changes nothing.
    ///
    /// - Parameter appTransactionId: The Apple Account's app transaction id.
    /// - Returns: What happened to each entry this call withdrew, in the ledger's order.
    /// - Throws: ``IAPError`` if the store fails, or `storageFailure` when other writers kept changing an entry.
    public func rescindConsent(appTransactionId: String) async throws -> [DeliveryOutcome] {
        var outcomes: [DeliveryOutcome] = []
        for entry in try await store.entries(appTransactionId: appTransactionId) where entry.consentRescindedAt == nil {
            let outcome = try await compareAndSet(
                entry,
                ifExhausted: { _ -> DeliveryOutcome? in
                    throw IAPError(
                        .storageFailure,
                        "transaction \(entry.transactionId) kept changing: its access was not withdrawn",
                        isRetryable: true
                    )
                },
                change: { current in
                    guard current.consentRescindedAt == nil else { return .done(nil) }
                    var withdrawn = current
                    withdrawn.consentRescindedAt = clock.now
                    if withdrawn.revokedAt == nil {
                        withdrawn.revokedAt = clock.now
                        withdrawn.revocationDelivered = false
                        withdrawn.refundAccessKept = nil
                    }
                    normalize(&withdrawn, now: clock.now)
                    return .write(withdrawn) { try await self.settle($0) }
                }
            )
            if let outcome {
                outcomes.append(outcome)
                report("delivery.consentRescinded", entry.transaction, userId: entry.owner)
            }
        }
        return outcomes
    }

    /// Marks a new entry withdrawn when its subscription's consent was rescinded: recorded settled, never granted.
    func inheritRescindedConsent(_ candidate: inout LedgerEntry, family: [LedgerEntry]) {
        guard family.contains(where: { $0.consentRescindedAt != nil }) else { return }
        candidate.consentRescindedAt = clock.now
        candidate.revokedAt = candidate.revokedAt ?? clock.now
        if candidate.deliveryState == .pending {
            candidate.deliveryState = .delivered
        }
        candidate.revocationDelivered = true
    }
}
