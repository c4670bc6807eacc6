public import IAPCore

/// A ``FulfillmentHook`` that keeps a wallet in memory the way an integrator's should: it applies each idempotency
/// key once, takes back only what it gave, counts every call and fails on demand.
///
/// Tests assert what a user relies on — balances and how many grants arrived — not that code ran:
///
/// ```swift
/// let wallet = RecordingFulfillmentHook()
/// let pipeline = DeliveryPipeline(verifier: verifier, catalog: catalog, store: ledger, hook: wallet)
/// wallet.failNext(1)  // the wallet service is down once
/// _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
/// _ = await pipeline.drainDueRetries()
/// #expect(wallet.balance("alice") == 100)
/// ```
///
/// A revoke whose grant never arrived is recorded and cancels that grant: if the grant arrives later, it gives
/// nothing (what a wallet keyed by ``Delivery/grantIdempotencyKey`` does).
public final class RecordingFulfillmentHook: FulfillmentHook {
    private struct State {
        var calls: [Delivery] = []
        var applied: [String: Delivery] = [:]
        var failuresLeft = 0
        var balances: [UserKey: Int64] = [:]
        var afterApplying: (@Sendable () -> Void)?
        var duringNextCall: (@Sendable () async -> Void)?
        var cancelledGrants: Set<String> = []
    }

    private let state = LockedValue(State())

    /// Creates an empty wallet.
    public init() {}

    /// Every grant and revoke call, in order, the failed ones included.
    public var calls: [Delivery] { state.withLock { $0.calls } }

    /// The deliveries applied, by idempotency key (a repeated key is applied once).
    public var applied: [String: Delivery] { state.withLock { $0.applied } }

    /// The units a user holds: each applied grant adds its ``Delivery/units``, each applied revoke takes them back.
    ///
    /// - Parameter userId: The user.
    /// - Returns: The balance, 0 for a user never granted anything.
    public func balance(_ userId: String) -> Int64 { state.withLock { $0.balances[UserKey(userId), default: 0] } }

    /// Makes the next `count` calls fail with ``IAPError/Code/fulfillmentFailed`` before they apply anything.
    ///
    /// - Parameter count: How many calls fail.
    public func failNext(_ count: Int) {
        state.withLock { $0.failuresLeft = count }
    }

    /// Runs `body` inside the next grant or revoke call, after its effect (a refund arriving mid-call, say).
    ///
    /// - Parameter body: What happens during the call.
    public func duringNextCall(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { $0.duringNextCall = body }
    }

    /// Runs `body` after every call that applied its effect, until ``clearAfterApply()`` (to simulate a crash
    /// right after a grant, before the ledger heard of it).
    ///
    /// - Parameter body: What happens after the effect.
    public func afterNextApply(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.afterApplying = body }
    }

    /// Stops running what ``afterNextApply(_:)`` set.
    public func clearAfterApply() {
        state.withLock { $0.afterApplying = nil }
    }

    public func grant(_ delivery: Delivery) async throws {
        try apply(delivery, sign: 1)
        await runDuringNextCall()
    }

    public func revoke(_ delivery: Delivery) async throws {
        try apply(delivery, sign: -1)
        await runDuringNextCall()
    }

    private func runDuringNextCall() async {
        let body = state.withLock { state -> (@Sendable () async -> Void)? in
            defer { state.duringNextCall = nil }
            return state.duringNextCall
        }
        await body?()
    }

    private func apply(_ delivery: Delivery, sign: Int64) throws {
        try state.withLock { state in
            state.calls.append(delivery)
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw IAPError(.fulfillmentFailed, "the wallet service is down")
            }
            guard state.applied[delivery.idempotencyKey] == nil else { return }
            if delivery.action == .grant, state.cancelledGrants.contains(delivery.idempotencyKey) {
                return  // taken back before it arrived
            }
            if delivery.action == .revoke, let grantKey = delivery.grantIdempotencyKey,
                state.applied[grantKey] == nil
            {
                state.cancelledGrants.insert(grantKey)  // never given: nothing to take back
                state.applied[delivery.idempotencyKey] = delivery
                return
            }
            state.applied[delivery.idempotencyKey] = delivery
            state.balances[UserKey(delivery.userId), default: 0] += sign * delivery.units
        }
        if let after = state.withLock({ $0.afterApplying }) {
            after()
        }
    }
}
