import IAPCore

extension PurchaseCoordinator {
    // MARK: - Sweep

    /// Submits every unfinished transaction of the store that the outbox does not hold, then drains the outbox.
    ///
    /// ``start(signedInUser:)`` sweeps at launch; call it again whenever the app becomes active (SwiftUI's
    /// `scenePhase` turning `.active`, UIKit's `sceneDidBecomeActive`), and from a background refresh. It catches
    /// what the updates listener cannot: purchases made through StoreKit's own views or another code path of the
    /// app, transactions handed out while no listener ran, and the purchases of an outbox moved aside. A transaction
    /// the server confirmed already is only finished.
    ///
    /// - Parameter force: Whether to submit outbox entries whose backoff is not over yet (`start` forces; a
    ///   foreground sweep should not, so that a server that is down is not hammered).
    /// - Returns: What was recovered from the store (``OutboxDrainReport/recovered``), delivered and still waiting.
    /// - Throws: ``IAPError`` when the store's unfinished transactions could not be listed; the outbox was drained
    ///   all the same.
    @discardableResult
    public func sweep(force: Bool = false) async throws -> OutboxDrainReport {
        await loadIfNeeded()
        var recovered: [String] = []
        var storeFailure: IAPError?
        do {
            for signedTransaction in try await store.unfinishedTransactions() {
                let transaction: UnverifiedTransaction
                do {
                    transaction = try UnverifiedTransaction(signedTransaction: signedTransaction)
                } catch {
                    emit(
                        .unreadable(
                            IAPError.wrapping(
                                error,
                                as: .malformedSignedData,
                                "an unfinished transaction is unreadable"
                            )
                        )
                    )
                    continue
                }
                let id = transaction.transactionId
                if let entry = outbox.entries[id] {
                    // Held already; newer signed data (a refund) replaces what it holds.
                    if Self.isNewer(transaction.payload, than: entry.signedTransaction) {
                        enqueue(transaction, userId: nil, orderId: nil)
                    }
                    continue
                }
                if inFlight.contains(id) {
                    continue
                }
                if await absorb(transaction) {
                    recovered.append(id)
                }
            }
        } catch {
            storeFailure = IAPError.wrapping(error, as: .internalError, "the store's unfinished transactions")
        }
        try? await persist()
        var report = await drain(sortedEntries().map(\.transactionId), force: force)
        // Recovered entries were new, so they were due and submitted above whatever `force` says.
        report.recovered = recovered
        if let storeFailure {
            throw storeFailure
        }
        return report
    }
}
