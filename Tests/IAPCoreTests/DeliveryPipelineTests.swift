import Foundation
import IAPCore
import IAPCrypto
import IAPTestSupport
import IAPTesting
import Testing

@Suite("Delivery pipeline")
struct DeliveryPipelineTests {
    @Test func consumableIsDeliveredOnceWithItsUnits() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("coins.100", quantity: 3))
        let pipeline = shop.pipeline()

        let first = await pipeline.submit(signedTransaction: jws, userId: "alice")
        #expect(first.isDelivered)
        #expect(first.shouldFinishTransaction)
        #expect(shop.wallet.balance("alice") == 300)

        let second = await pipeline.submit(signedTransaction: jws, userId: "alice")
        #expect(second.isAlreadyDelivered)
        #expect(second.shouldFinishTransaction)
        #expect(shop.wallet.calls.count == 1)
        #expect(shop.wallet.balance("alice") == 300)
    }

    @Test func aRestartedServerDoesNotGrantAgain() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("pro.lifetime"))
        _ = await shop.pipeline().submit(signedTransaction: jws, userId: "alice")

        let restarted = shop.pipeline()
        let outcome = await restarted.submit(signedTransaction: jws, userId: "alice")
        #expect(outcome.isAlreadyDelivered)
        #expect(shop.wallet.calls.count == 1)

        let entries = try await shop.memory.history(userId: "alice", cursor: nil, limit: 10).entries
        let snapshot = EntitlementEngine(catalog: shop.catalog).evaluate(
            entries: entries,
            renewalInfos: [],
            at: shop.clock.now
        )
        #expect(snapshot.entitlementIds == ["pro"])
    }

    @Test func oneTransactionSubmittedAThousandTimesAtOnceGrantsOnce() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("coins.100"))
        let pipeline = shop.pipeline()
        let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
            for _ in 0..<1_000 {
                group.addTask { await pipeline.submit(signedTransaction: jws, userId: "alice") }
            }
            var outcomes: [DeliveryOutcome] = []
            for await outcome in group {
                outcomes.append(outcome)
            }
            return outcomes
        }
        #expect(outcomes.filter(\.isDelivered).count == 1)
        #expect(outcomes.allSatisfy { $0.isDelivered || $0.isAlreadyDelivered || $0.isPending })
        #expect(shop.wallet.calls.count == 1)
        #expect(shop.wallet.balance("alice") == 100)
    }

    @Test func aFailedGrantIsRetriedToSuccess() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("coins.100"))
        let pipeline = shop.pipeline()
        shop.wallet.failNext(2)

        let outcome = await pipeline.submit(signedTransaction: jws, userId: "alice")
        guard case .deferred(let entry, let error) = outcome else {
            Issue.record("expected deferred, got \(outcome)")
            return
        }
        #expect(!outcome.shouldFinishTransaction)
        #expect(error.code == .fulfillmentFailed)
        #expect(entry.deliveryState == .retrying)
        #expect(entry.nextAttemptAt == shop.clock.now.addingTimeInterval(30))

        #expect(await pipeline.drainDueRetries().delivered == 0)  // not due yet
        shop.clock.advance(by: .seconds(30))
        let secondTry = await pipeline.drainDueRetries()
        #expect(secondTry.deferred == 1)
        let rescheduled = try #require(await shop.memory.entry(transactionId: entry.transactionId))
        #expect(rescheduled.nextAttemptAt == shop.clock.now.addingTimeInterval(60))  // doubled

        shop.clock.advance(by: .seconds(60))
        #expect(await pipeline.drainDueRetries().delivered == 1)
        #expect(shop.wallet.calls.count == 3)
        #expect(shop.wallet.balance("alice") == 100)
        #expect(await pipeline.submit(signedTransaction: jws, userId: "alice").isAlreadyDelivered)
    }

    @Test func aGrantThatKeepsFailingIsDeadLetteredNotDropped() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("pro.lifetime"))
        let pipeline = shop.pipeline(retryPolicy: RetryPolicy(maximumAttempts: 3, jitter: 0))
        shop.wallet.failNext(100)

        _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
        for _ in 0..<5 {
            shop.clock.advance(by: .seconds(3_600))
            _ = await pipeline.drainDueRetries()
        }
        let outcome = await pipeline.submit(signedTransaction: jws, userId: "alice")
        guard case .deferred(let entry, let error) = outcome else {
            Issue.record("expected deferred, got \(outcome)")
            return
        }
        #expect(entry.deliveryState == .deadLettered)
        #expect(entry.deliveryAttempts == 3)
        #expect(error.message.contains("waits for a person"))
        #expect(shop.wallet.calls.count == 3)
        #expect(await shop.memory.statistics().deadLetters == 1)
    }

    @Test func aCrashBetweenRecordingAndGrantingIsRecoveredOnceTheClaimExpires() async throws {
        var shop = try Shop()
        let jws = try shop.sign(shop.transaction("coins.100"))
        // The entry is recorded, already claimed by this deliverer, and the process dies before the hook.
        shop.store.inject(.afterApplying, on: .insert)

        let outcome = await shop.pipeline().submit(signedTransaction: jws, userId: "alice")
        guard case .rejected(let error) = outcome else {
            Issue.record("expected rejected, got \(outcome)")
            return
        }
        #expect(error.isRetryable)
        #expect(shop.wallet.calls.isEmpty)
        #expect(await shop.memory.statistics().transactions == 1)  // recorded, not lost

        #expect(await shop.pipeline().drainDueRetries().delivered == 0)  // the dead deliverer's claim still holds
        shop.clock.advance(by: .seconds(120))
        let report = await shop.pipeline().drainDueRetries()
        #expect(report.delivered == 1)
        #expect(shop.wallet.balance("alice") == 100)
    }

    @Test func aNewPurchaseIsRecordedClaimedSoItCostsOneInsertAndOneMark() async throws {
        var shop = try Shop()
        let transaction = shop.transaction("coins.100")
        let jws = try shop.sign(transaction)
        #expect(await shop.pipeline().submit(signedTransaction: jws, userId: "alice").isDelivered)
        // The insert carries the claim; the only replace is the delivered mark.
        #expect(shop.store.callCount(.insert) == 1)
        #expect(shop.store.callCount(.replace) == 1)
        let entry = try #require(await shop.memory.entry(transactionId: transaction.transactionId ?? ""))
        #expect(entry.deliveryState == .delivered)
        #expect(entry.revision == 2)
        #expect(entry.grantAttempted && entry.grantedUnits == 100)
    }

    @Test func aCrashAfterGrantingIsRecoveredWithTheSameIdempotencyKey() async throws {
        var shop = try Shop()
        let transaction = shop.transaction("coins.100")
        let jws = try shop.sign(transaction)
        let store = shop.store
        shop.wallet.afterNextApply { store.inject(.beforeApplying, on: .replace) }  // marking fails

        let outcome = await shop.pipeline().submit(signedTransaction: jws, userId: "alice")
        #expect(outcome.isRejected)
        shop.wallet.clearAfterApply()
        #expect(await shop.pipeline().drainDueRetries().skipped == 0)  // the claim still holds: not due
        shop.clock.advance(by: .seconds(121))
        #expect(await shop.pipeline().drainDueRetries().delivered == 1)

        #expect(shop.wallet.calls.map(\.idempotencyKey) == [transaction.transactionId, transaction.transactionId])
        #expect(shop.wallet.balance("alice") == 100)  // applied once
    }

    @Test func anotherUsersTransactionIsRejected() async throws {
        var shop = try Shop()
        let token = AppAccountToken.derive(from: "alice", namespace: UUID()).uuidString
        let withToken = try shop.sign(shop.transaction("pro.lifetime", token: token))
        let withoutToken = try shop.sign(shop.transaction("pro.lifetime"))
        let pipeline = shop.pipeline()
        #expect(await pipeline.submit(signedTransaction: withToken, userId: "alice").isDelivered)
        #expect(await pipeline.submit(signedTransaction: withoutToken, userId: "alice").isDelivered)

        for jws in [withToken, withoutToken] {
            let replay = await pipeline.submit(signedTransaction: jws, userId: "mallory")
            guard case .rejected(let error) = replay else {
                Issue.record("expected rejected, got \(replay)")
                continue
            }
            #expect(error.code == .ownershipConflict)
        }
        #expect(shop.wallet.calls.count == 2)
    }

    @Test func theOwnerComesFromTheTokenWhenNoUserIsGiven() async throws {
        var shop = try Shop()
        let token = UUID().uuidString
        let jws = try shop.sign(shop.transaction("coins.100", token: token))
        let other = try shop.sign(shop.transaction("coins.100", token: token))
        let pipeline = shop.pipeline()
        _ = await pipeline.submit(signedTransaction: jws, userId: "alice")
        let outcome = await pipeline.submit(signedTransaction: other, userId: nil)
        #expect(outcome.entry?.userId == "alice")

        // Neither a token nor a user: recorded (a refund must not be lost) but granted to nobody until a user
        // presents it.
        let anonymous = shop.transaction("coins.100")
        let signed = try shop.sign(anonymous)
        let waiting = await pipeline.submit(signedTransaction: signed, userId: nil)
        guard case .awaitingOwner(let entry) = waiting else {
            Issue.record("expected awaitingOwner, got \(waiting)")
            return
        }
        #expect(!waiting.shouldFinishTransaction)
        #expect(entry.deliveryState == .awaitingOwner)
        #expect(waiting.entry?.userId == DeliveryPipeline.unownedPrefix + (anonymous.transactionId ?? ""))
        #expect(shop.wallet.calls.count == 2)
        let claimed = await pipeline.submit(signedTransaction: signed, userId: "bob")
        #expect(claimed.isDelivered)
        #expect(shop.wallet.calls.last?.userId == "bob")
    }

    @Test func aRefundTakesBackOnceAndAnOldCopyCannotUndoIt() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")
        let original = try shop.sign(purchase)
        let pipeline = shop.pipeline()
        _ = await pipeline.submit(signedTransaction: original, userId: "alice")

        shop.clock.advance(by: .seconds(3_600))
        var refunded = purchase
        refunded.revocationDate = shop.clock.now
        refunded.revocationReason = .refundedForOtherReason
        refunded.signedDate = shop.clock.now
        let revoked = try #require(await pipeline.apply(refunded))
        #expect(revoked.isRevoked)
        #expect(shop.wallet.balance("alice") == 0)
        #expect(shop.wallet.calls.last?.action == .revoke)
        #expect(shop.wallet.calls.last?.idempotencyKey == "\(purchase.transactionId ?? ""):revoke:0")

        #expect(await pipeline.apply(refunded)?.isRevoked == true)
        #expect(await pipeline.submit(signedTransaction: original, userId: "alice").isRevoked)
        #expect(shop.wallet.calls.count == 2)
        #expect(shop.wallet.balance("alice") == 0)

        shop.clock.advance(by: .seconds(3_600))
        var reversed = purchase
        reversed.signedDate = shop.clock.now
        #expect(await pipeline.apply(reversed)?.isDelivered == true)
        #expect(shop.wallet.calls.last?.idempotencyKey == "\(purchase.transactionId ?? ""):grant:1")
        #expect(shop.wallet.balance("alice") == 100)
    }

    @Test func aRefundSignedInTheSameMillisecondCountsButAnEqualCopyCannotReverseIt() async throws {
        var shop = try Shop()
        let purchase = shop.transaction("coins.100")
        let pipeline = shop.pipeline()
        _ = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")

        var refunded = purchase
        refunded.revocationDate = shop.clock.now  // same signedDate as the purchase
        #expect(await pipeline.apply(refunded)?.isRevoked == true)
        #expect(shop.wallet.balance("alice") == 0)
        #expect(await pipeline.apply(purchase)?.isRevoked == true)  // not newer: no reversal
        #expect(shop.wallet.balance("alice") == 0)
    }

    @Test func aTransactionRevokedBeforeItArrivedIsNeverGranted() async throws {
        var shop = try Shop()
        var purchase = shop.transaction("pro.lifetime")
        purchase.revocationDate = shop.clock.now
        let outcome = await shop.pipeline().submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        #expect(outcome.isRevoked)
        #expect(outcome.shouldFinishTransaction)
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test func nothingIsRecordedForBadInput() async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        let forged = try JWSSigner(key: P256PrivateKey(), certificateChain: shop.pki.x5c).sign(
            shop.transaction("coins.100")
        )
        var otherApp = shop.transaction("coins.100")
        otherApp.bundleId = "com.example.other"

        let cases: [(String, IAPError.Code)] = [
            (forged, .signatureInvalid), (try shop.sign(otherApp), .bundleIdMismatch),
            ("not a jws", .malformedSignedData),
        ]
        for (jws, code) in cases {
            guard case .rejected(let error) = await pipeline.submit(signedTransaction: jws, userId: "alice") else {
                Issue.record("expected a rejection with \(code)")
                continue
            }
            #expect(error.code == code)
            #expect(!error.isRetryable)
        }
        #expect(await shop.memory.statistics().transactions == 0)
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test func orderHistoryIsNewestFirstWithFilters() async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        var ids: [String] = []
        for product in ["coins.100", "pro.lifetime", "coins.100", "plus.monthly"] {
            let transaction = shop.transaction(product)
            ids.append(transaction.transactionId ?? "")
            _ = await pipeline.submit(signedTransaction: try shop.sign(transaction), userId: "alice")
            shop.clock.advance(by: .seconds(60))
        }
        let history = OrderHistory(store: shop.store)
        let all = try await history.page(userId: "alice", limit: 3)
        #expect(all.items.map(\.transactionId) == Array(ids.reversed().prefix(3)))
        let rest = try await history.page(userId: "alice", cursor: all.nextCursor, limit: 3)
        #expect(rest.items.map(\.transactionId) == [ids[0]])
        #expect(rest.nextCursor == nil)

        let coins = try await history.page(userId: "alice", limit: 1, filter: .init(productIds: ["coins.100"]))
        #expect(coins.items.map(\.transactionId) == [ids[2]])
        let older = try await history.page(
            userId: "alice",
            cursor: coins.nextCursor,
            limit: 5,
            filter: .init(productIds: ["coins.100"])
        )
        #expect(older.items.map(\.transactionId) == [ids[0]])
        #expect(older.items.allSatisfy { $0.state == .delivered })
        await #expect(throws: IAPError(.invalidArgument)) { try await history.page(userId: "alice", limit: 0) }
    }

    @Test func derivedTokensAreVersionFiveUUIDs() {
        // RFC 9562's namespace for DNS names; Python's uuid.uuid5(NAMESPACE_DNS, "python.org").
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8") ?? UUID()
        #expect(
            AppAccountToken.derive(from: "python.org", namespace: dns).uuidString.lowercased()
                == "886313e1-3b8a-5372-9b90-0c9aee199e5d"
        )
        #expect(
            AppAccountToken.derive(from: "user-42", namespace: dns)
                == AppAccountToken.derive(from: "user-42", namespace: dns)
        )
        #expect(
            AppAccountToken.normalized("886313E1-3B8A-5372-9B90-0C9AEE199E5D") == "886313e1-3b8a-5372-9b90-0c9aee199e5d"
        )
        #expect(AppAccountToken.normalized("not-a-uuid") == nil)
    }
}
