import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import Testing

/// Whose a purchase is: derived tokens checked before anyone claims them, pre-registered tokens, the pipeline's own
/// user id namespace, and the one rule by which every road delivers.
@Suite("Delivery ownership")
struct DeliveryOwnershipTests {
    static let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10") ?? UUID()

    static func pipeline(_ shop: Shop, check: TokenOwnershipCheck? = nil) -> DeliveryPipeline {
        shop.pipeline(tokenOwnership: check)
    }

    static func token(for user: String) -> String {
        AppAccountToken.derive(from: user, namespace: namespace).uuidString
    }

    @Test func aStolenTransactionWithADerivedTokenIsRefusedEvenBeforeItsOwnerSubmits() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop, check: .derived(namespace: Self.namespace))
        let purchase = shop.transaction("coins.100", token: Self.token(for: "alice"))
        let signed = try shop.sign(purchase)

        let stolen = await pipeline.submit(signedTransaction: signed, userId: "mallory")
        guard case .rejected(let error) = stolen else {
            Issue.record("expected rejected, got \(stolen)")
            return
        }
        #expect(error.code == .ownershipConflict)
        #expect(shop.wallet.calls.isEmpty)
        #expect(await shop.memory.user(forAppAccountToken: Self.token(for: "alice").lowercased()) == nil)
        #expect(await shop.memory.statistics().transactions == 0)

        let owner = await pipeline.submit(signedTransaction: signed, userId: "alice")
        #expect(owner.isDelivered)
        #expect(shop.wallet.balance("alice") == 100)
        #expect(shop.wallet.balance("mallory") == 0)
    }

    @Test func aTransactionWaitingForItsOwnerIsRefusedToAThiefAndGivenToItsOwner() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop, check: .derived(namespace: Self.namespace))
        let purchase = shop.transaction("pro.lifetime", token: Self.token(for: "alice"))

        let notified = await pipeline.deliver(purchase, userId: nil)  // the App Store told the server first
        #expect(notified.isAwaitingOwner)
        let stolen = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "mallory")
        #expect(stolen.isRejected)
        let claimed = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        #expect(claimed.isDelivered)
        #expect(shop.wallet.calls.map(\.userId) == ["alice"])
    }

    @Test func withoutACheckAnUnclaimedTokenGoesToItsFirstClaimantUnlessItWasBoundBeforeThePurchase() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop)

        // A random token per order, never registered: whoever presents the transaction first gets it.
        let unregistered = try shop.sign(shop.transaction("pro.lifetime", token: UUID().uuidString))
        #expect(await pipeline.submit(signedTransaction: unregistered, userId: "mallory").isDelivered)

        // The same kind of token, bound to its user when the order was made: the thief is refused.
        let orderToken = UUID().uuidString.lowercased()
        #expect(try await shop.memory.bind(appAccountToken: orderToken, to: "alice") == .bound)
        let registered = try shop.sign(shop.transaction("pro.lifetime", token: orderToken))
        #expect(await pipeline.submit(signedTransaction: registered, userId: "mallory").isRejected)
        #expect(await pipeline.submit(signedTransaction: registered, userId: "alice").isDelivered)
    }

    @Test func aBindingMadeBeforeTheCheckStaysValid() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop, check: .derived(namespace: Self.namespace))
        let legacyToken = UUID().uuidString.lowercased()  // random, from an app version before derived tokens
        _ = try await shop.memory.bind(appAccountToken: legacyToken, to: "alice")
        let signed = try shop.sign(shop.transaction("coins.100", token: legacyToken))
        #expect(await pipeline.submit(signedTransaction: signed, userId: "alice").isDelivered)

        let custom = Self.pipeline(shop, check: TokenOwnershipCheck { _, userId in userId.hasPrefix("staff-") })
        let other = try shop.sign(shop.transaction("coins.100", token: UUID().uuidString))
        #expect(await custom.submit(signedTransaction: other, userId: "bob").isRejected)
        #expect(await custom.submit(signedTransaction: other, userId: "staff-7").isDelivered)
    }

    @Test func userIdsInThePipelinesOwnNamespaceAreRefusedAsInput() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop)
        let anonymous = shop.transaction("coins.100")
        let waiting = await pipeline.deliver(anonymous, userId: nil)
        let placeholder = try #require(waiting.entry?.userId)
        #expect(placeholder.hasPrefix(DeliveryPipeline.unownedPrefix))

        for userId in [placeholder, "unowned:anything", ""] {
            #expect(throws: IAPError(.invalidArgument)) { try DeliveryPipeline.validate(userId: userId) }
            let outcome = await pipeline.submit(signedTransaction: try shop.sign(anonymous), userId: userId)
            guard case .rejected(let error) = outcome else {
                Issue.record("expected rejected for '\(userId)', got \(outcome)")
                continue
            }
            #expect(error.code == .invalidArgument)
        }
        #expect(shop.wallet.calls.isEmpty)
        #expect(await pipeline.deliver(anonymous, userId: "bob").isDelivered)
        #expect(throws: Never.self) { try DeliveryPipeline.validate(userId: "bob") }
    }

    @Test func aKnownTransactionIsAppliedWithoutAUserAndCheckedWithOne() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop)
        let purchase = shop.transaction("coins.100")  // no token: only the ledger knows the owner
        #expect(await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice").isDelivered)

        // Without a user, newer data is applied to what the ledger holds (here a refund), whoever owns it.
        shop.clock.advance(by: .seconds(60))
        let refunded = DeliveryRaceTests.refunded(purchase, at: shop.clock.now)
        #expect(await pipeline.deliver(refunded, userId: nil).isRevoked)
        #expect(shop.wallet.balance("alice") == 0)

        // With a user, the ledger's owner is checked: another user is refused, the owner is answered.
        #expect(await pipeline.deliver(refunded, userId: "mallory").isRejected)
        #expect(await pipeline.deliver(refunded, userId: "alice").isRevoked)
        #expect(shop.wallet.calls.count == 2)
    }

    @Test func anEntryWaitingForItsOwnerIsGivenToTheUserItsTokenWasBoundToSince() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop)
        let token = UUID().uuidString.lowercased()
        let purchase = shop.transaction("pro.lifetime", token: token)
        #expect(await pipeline.deliver(purchase, userId: nil).isAwaitingOwner)

        // The app registers the token later (another purchase of the same user, or an explicit bind) ...
        _ = try await shop.memory.bind(appAccountToken: token, to: "alice")
        // ... and the App Store's retried notification delivers it to that user.
        let redelivered = await pipeline.deliver(purchase, userId: nil)
        #expect(redelivered.isDelivered)
        #expect(redelivered.entry?.userId == "alice")
        #expect(shop.wallet.calls.map(\.userId) == ["alice"])
    }

    @Test func outcomesEntriesAndReportsDescribeThemselvesInOneLine() async throws {
        var shop = try Shop()
        let pipeline = Self.pipeline(shop)
        let purchase = shop.transaction("coins.100")
        let outcome = await pipeline.submit(signedTransaction: try shop.sign(purchase), userId: "alice")
        let id = try #require(purchase.transactionId)
        #expect(outcome.description == "delivered: transaction \(id) (coins.100) of alice, Sandbox, delivered")
        #expect(try #require(outcome.entry).description == "transaction \(id) (coins.100) of alice, Sandbox, delivered")
        let rejected = await pipeline.submit(signedTransaction: "x", userId: "alice")
        #expect(rejected.description.hasPrefix("rejected: malformedSignedData: "))
        #expect(!outcome.description.contains("\n"))
    }
}
