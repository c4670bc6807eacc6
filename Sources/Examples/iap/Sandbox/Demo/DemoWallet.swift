import Foundation
import IAPCore

/// The demo's fulfillment hook: a small wallet of coins and unlocked features per user, kept in a JSON file
/// beside the ledger, idempotent by the delivery's key as every hook must be.
///
/// It can be told to fail the grants of one transaction a number of times ("the wallet service is down"), to show
/// the retry queue at work.
actor DemoWallet: FulfillmentHook {
    /// What the wallet file holds.
    struct State: Codable, Equatable {
        /// Coins per user.
        var coins: [String: Int64] = [:]
        /// Entitlement ids unlocked by non-consumables per user, with how many standing grants unlock each.
        var features: [String: [String: Int]] = [:]
        /// Every idempotency key applied, with what it did.
        var applied: [String: String] = [:]
        /// Grant keys a take-back cancelled before they were applied.
        var cancelled: Set<String> = []
    }

    private let file: URL
    private(set) var state: State
    private var failures: [String: Int] = [:]
    /// The grants and take-backs applied by this process.
    private(set) var appliedThisRun = 0

    /// Opens the wallet file, or starts an empty wallet.
    init(file: URL) throws {
        self.file = file
        if let data = try? Data(contentsOf: file) {
            do {
                state = try JSONDecoder().decode(State.self, from: data)
            } catch {
                throw IAPError(.storageFailure, "the demo wallet \(file.path) is not readable: \(error)")
            }
        } else {
            state = State()
        }
    }

    /// Makes the next `times` grants of a transaction fail.
    func failGrants(of transactionId: String, times: Int) {
        failures[transactionId] = times
    }

    func grant(_ delivery: Delivery) async throws {
        if let remaining = failures[delivery.transactionId], remaining > 0 {
            failures[delivery.transactionId] = remaining - 1
            throw IAPError(.transportFailure, "the wallet service did not answer", isRetryable: true)
        }
        guard state.applied[delivery.idempotencyKey] == nil, !state.cancelled.contains(delivery.idempotencyKey) else {
            return
        }
        // Subscriptions are not kept here: their state comes from the ledger (EntitlementEngine) at any instant.
        if delivery.product.kind == .consumable {
            state.coins[delivery.userId, default: 0] += delivery.units
        } else if delivery.product.kind == .nonConsumable {
            for feature in delivery.product.entitlements {
                state.features[delivery.userId, default: [:]][feature, default: 0] += 1
            }
        }
        state.applied[delivery.idempotencyKey] = "grant \(delivery.product.productId) to \(delivery.userId)"
        appliedThisRun += 1
        try save()
    }

    func revoke(_ delivery: Delivery) async throws {
        guard state.applied[delivery.idempotencyKey] == nil else { return }
        let grantKey = delivery.grantIdempotencyKey ?? delivery.transactionId
        guard state.applied[grantKey] != nil else {
            // The grant never happened here: take back nothing, and refuse it if it comes late.
            state.cancelled.insert(grantKey)
            state.applied[delivery.idempotencyKey] = "cancelled \(grantKey)"
            try save()
            return
        }
        if delivery.product.kind == .consumable {
            state.coins[delivery.userId, default: 0] -= delivery.units
        } else if delivery.product.kind == .nonConsumable {
            for feature in delivery.product.entitlements {
                let count = (state.features[delivery.userId]?[feature] ?? 0) - 1
                state.features[delivery.userId, default: [:]][feature] = count > 0 ? count : nil
            }
        }
        state.applied[delivery.idempotencyKey] = "revoke \(delivery.product.productId) from \(delivery.userId)"
        appliedThisRun += 1
        try save()
    }

    /// Writes the wallet file: a temporary file, flushed, then renamed over the old one.
    private func save() throws {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try SystemFile.replaceContents(of: file.path, with: Array(try encoder.encode(state)))
        } catch {
            throw IAPError(.storageFailure, "cannot write the demo wallet \(file.path): \(error)")
        }
    }
}
