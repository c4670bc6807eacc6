import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTestSupport
import Testing

/// A user is its bytes: ids that Swift's `==` calls equal (canonical equivalence) are two users everywhere the
/// pipeline decides who owns what; ids that could read as another are refused; a body naming a member twice is
/// refused.
@Suite("User identity")
struct UserIdentityTests {
    /// An NFC and an NFD spelling of one name, and a name with the KELVIN SIGN, whose canonical form is `K`.
    static let lookalikes = [("m\u{00FC}ller", "mu\u{0308}ller"), ("Kim", "\u{212A}im")]

    @Test func lookalikeUserIdsAreEqualStringsButTwoUsersOfTheirPurchases() async throws {
        for (first, second) in Self.lookalikes {
            #expect(first == second, "the premise: Swift's == follows canonical equivalence")
            var shop = try Shop()
            let pipeline = shop.pipeline()
            let purchase = shop.transaction("coins.100")
            let signed = try shop.sign(purchase)
            #expect(await pipeline.submit(signedTransaction: signed, userId: first).isDelivered)

            // The look-alike presenting the first user's purchase is refused, never told it was delivered.
            let stolen = await pipeline.submit(signedTransaction: signed, userId: second)
            guard case .rejected(let error) = stolen else {
                Issue.record("expected the look-alike to be refused, got \(stolen)")
                continue
            }
            #expect(error.code == .ownershipConflict)
            #expect(shop.wallet.calls.count == 1)
            #expect(shop.wallet.balance(first) == 100)
            #expect(shop.wallet.balance(second) == 0)

            // Each has only their own history.
            let own = try await shop.memory.history(userId: first, cursor: nil, limit: 10).entries
            let other = try await shop.memory.history(userId: second, cursor: nil, limit: 10).entries
            #expect(own.count == 1 && Array(own[0].userId.utf8) == Array(first.utf8))
            #expect(other.isEmpty)

            // The look-alike's own purchase is theirs.
            let theirs = try shop.sign(shop.transaction("coins.100"))
            #expect(await pipeline.submit(signedTransaction: theirs, userId: second).isDelivered)
            #expect(shop.wallet.balance(second) == 100)
            #expect(await shop.memory.statistics().users == 2)
        }
    }

    @Test func aTokenBoundToOneSpellingIsRefusedToTheOther() async throws {
        var shop = try Shop()
        let pipeline = shop.pipeline()
        let token = UUID().uuidString.lowercased()
        #expect(try await shop.memory.bind(appAccountToken: token, to: "m\u{00FC}ller") == .bound)
        let signed = try shop.sign(shop.transaction("pro.lifetime", token: token))
        #expect(await pipeline.submit(signedTransaction: signed, userId: "mu\u{0308}ller").isRejected)
        #expect(await pipeline.submit(signedTransaction: signed, userId: "m\u{00FC}ller").isDelivered)
    }

    @Test func aSubmissionWhoseBodyNamesAnotherSpellingThanTheTokenIsRefused() async throws {
        var shop = try Shop()
        let handler = TransactionSubmissionHandler(pipeline: shop.pipeline())
        let signed = try shop.sign(shop.transaction("coins.100"))
        let body = #"{"signedTransaction":"\#(signed)","userId":"mu\u0308ller"}"#
        let response = await handler.handle(body: Data(body.utf8), authenticatedUserId: "m\u{00FC}ller")
        #expect(response.status == 403 || response.status == 400, "\(response)")
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test(
        arguments: [
            ("   ", "blanks"), ("\t\u{3000}", "blanks"), ("alice\u{202E}", "U+202E"), ("al\u{200D}ice", "U+200D"),
            ("alice\u{2028}", "U+2028"), ("alice\u{2029}", "U+2029"), ("\u{FEFF}alice", "U+FEFF"),
            ("ali\u{200B}ce", "U+200B"), ("alice\u{2066}", "U+2066"), ("alice\u{0007}", "U+0007"),
            ("alice\n", "U+000A"), ("\u{061C}alice", "U+061C"),
        ]
    )
    func anIdThatCouldReadAsAnotherIsRefused(userId: String, named: String) async throws {
        let error = try #require(throws: IAPError.self) { try DeliveryPipeline.validate(userId: userId) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains(named), "\(error.message)")
        var shop = try Shop()
        let outcome = await shop.pipeline().submit(
            signedTransaction: try shop.sign(shop.transaction("coins.100")),
            userId: userId
        )
        #expect(outcome.isRejected)
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test(arguments: ["m\u{00FC}ller", "mu\u{0308}ller", "\u{212A}im", "alice@example.com", "用户-42", "a b", "🙂"])
    func visibleIdsInAnyScriptAreAccepted(userId: String) throws {
        try DeliveryPipeline.validate(userId: userId)
    }

    @Test(
        arguments: [
            #"{"signedTransaction":"A","signedTransaction":"B"}"#,
            #"{"signedTransaction":"A","userId":"alice","userId":"mallory"}"#,
            #"{"signedTransaction":"A","orderId":"1","order\u0049d":"2"}"#,
        ]
    )
    func aSubmissionBodyThatNamesAMemberTwiceIsRefused(body: String) async throws {
        var shop = try Shop()
        let handler = TransactionSubmissionHandler(pipeline: shop.pipeline())
        let signed = try shop.sign(shop.transaction("coins.100"))
        let real = body.replacingOccurrences(of: #""A""#, with: #""\#(signed)""#)
        let response = await handler.handle(body: Data(real.utf8), authenticatedUserId: "alice")
        #expect(response.status == 400, "\(response)")
        #expect(response.detail?.message.contains("twice") == true, "\(String(describing: response.detail))")
        #expect(shop.wallet.calls.isEmpty)
    }

    @Test func aNotificationBodyThatNamesAMemberTwiceIsRefused() async throws {
        let shop = try Shop()
        let processor = NotificationProcessor(pipeline: shop.pipeline())
        let outcome = await processor.process(body: Data(#"{"signedPayload":"a","signedPayload":"b"}"#.utf8))
        guard case .rejected(let error) = outcome else {
            Issue.record("expected rejected, got \(outcome)")
            return
        }
        #expect(error.code == .malformedRequest)
        #expect(error.message.contains("twice"))
    }
}
