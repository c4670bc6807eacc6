#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whose a transaction is: the appAccountToken's binding, the token ownership check, the purchase it continues and
/// the ledger's owner, decided before anything is written, and the entry's owner changed by compare-and-set.
extension DeliveryPipeline {
    /// Who a transaction is for, decided without writing anything.
    struct OwnerClaim {
        var owner: String
        var token: String?
        var awaitingOwner: Bool
        /// Whether the token is bound to the owner already (a binding never changes, so nothing is left to bind).
        var tokenBound = false
    }

    /// Whether an entry's owner is a placeholder (the token itself while it waits, or `unowned:<id>`): the first
    /// user who presents the transaction may take it.
    static func isPlaceholder(_ entry: LedgerEntry) -> Bool {
        entry.owner == nil
    }

    func resolveOwner(of transaction: TransactionPayload, transactionId: String, requested: String?)
        async throws -> OwnerClaim
    {
        var token: String?
        if let rawToken = transaction.appAccountToken, !rawToken.isEmpty {
            guard let normalized = AppAccountToken.normalized(rawToken) else {
                throw IAPError(.invalidArgument, "the appAccountToken '\(rawToken)' is not a UUID")
            }
            token = normalized
        }
        var bound: String?
        if let token {
            bound = try await store.user(forAppAccountToken: token)
        }
        // The owner of the purchase this one continues (a renewal, an upgrade), unless that is itself
        // still waiting for its owner.
        let continued = try await owner(ofOriginal: transaction.originalTransactionId)

        if let requested {
            if let bound, !bound.isSameUser(as: requested) {
                throw IAPError(
                    .ownershipConflict,
                    "the appAccountToken of transaction \(transactionId) belongs to another user ('\(bound)'), "
                        + "not '\(requested)'"
                )
            }
            if bound == nil, let token, let tokenOwnership, let uuid = UUID(uuidString: token),
                !tokenOwnership.allows(uuid, for: requested)
            {
                throw IAPError(
                    .ownershipConflict,
                    "the appAccountToken of transaction \(transactionId) was not made for user '\(requested)' "
                        + "(the token ownership check refused it)"
                )
            }
            if let continued, !continued.isSameUser(as: requested) {
                throw IAPError(
                    .ownershipConflict,
                    "transaction \(transactionId) continues a purchase of another user ('\(continued)'), "
                        + "not '\(requested)'"
                )
            }
            return OwnerClaim(
                owner: requested,
                token: token,
                awaitingOwner: false,
                tokenBound: bound.isSameUser(as: requested)
            )
        }
        if let bound {
            return OwnerClaim(owner: bound, token: token, awaitingOwner: false, tokenBound: true)
        }
        if let continued {
            return OwnerClaim(owner: continued, token: token, awaitingOwner: false)
        }
        guard let token else {
            // Nobody can be named yet (a notification about a purchase the app never reported): record it, so a
            // refund is never lost, and give it to the first user who presents it.
            return OwnerClaim(owner: Self.unownedPrefix + transactionId, token: nil, awaitingOwner: true)
        }
        return OwnerClaim(owner: token, token: token, awaitingOwner: unclaimedTokenPolicy == .awaitOwner)
    }

    /// The stored entry, once its owner is settled: a transaction waiting for its owner is given to the
    /// user who presents it with its token; anyone else's claim on a recorded transaction is rejected.
    func adopt(_ existing: LedgerEntry, by claim: OwnerClaim, transactionId: String) async throws -> LedgerEntry {
        let refused = IAPError(
            .ownershipConflict,
            "transaction \(transactionId) is recorded for another user; it cannot be claimed by '\(claim.owner)'"
        )
        return try await compareAndSet(
            existing,
            ifExhausted: { _ in throw refused },
            change: { current in
                if current.userId.isSameUser(as: claim.owner) {
                    return .done(current)
                }
                // A placeholder owner (the token itself, or `unowned:<id>`) gives way to the first user who presents the
                // transaction, whatever became of it meanwhile (a refund may have settled it already); checked again on
                // every turn, so a user who adopted it first keeps it.
                let claimable =
                    claim.token.isSameUser(as: current.userId)
                    || (claim.token == nil && current.userId.isSameUser(as: Self.unownedPrefix + current.transactionId))
                guard Self.isPlaceholder(current), !claim.awaitingOwner, claimable else {
                    throw refused
                }
                var adopted = current
                adopted.userId = claim.owner
                if current.deliveryState == .awaitingOwner {
                    adopted.deliveryState = .pending
                    adopted.nextAttemptAt = nil
                }
                return .write(adopted) { $0 }
            }
        )
    }

    /// Gives an entry to the user its token is bound to.
    func hand(_ entry: LedgerEntry, to holder: String) async throws {
        try await compareAndSet(
            entry,
            ifExhausted: { _ in },
            change: { current in
                guard !current.userId.isSameUser(as: holder) else { return .done(()) }
                var moved = current
                moved.userId = holder
                return .write(moved) { _ in }
            }
        )
    }

    /// The owner of a purchase family, unless every entry of it still waits for its owner.
    private func owner(ofOriginal originalTransactionId: String?) async throws -> String? {
        guard let originalTransactionId, !originalTransactionId.isEmpty else { return nil }
        let family = try await store.entries(originalTransactionId: originalTransactionId)
        return family.first { !Self.isPlaceholder($0) }?.userId
    }
}
