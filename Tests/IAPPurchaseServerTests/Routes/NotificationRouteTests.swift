import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// `POST /iap/v1/notifications` through the router: App Store Server Notifications V2, answered neutrally.
@Suite("Routes: POST /iap/v1/notifications")
struct NotificationRouteTests {
    typealias World = PurchaseServerWorld

    /// alice's token bound before her purchase: the purchase's transaction id and the App Store's signed
    /// notification of it.
    static func boundPurchaseNotification(_ world: World) async throws -> (transactionId: String, signed: String) {
        let bound = try await world.service(
            "POST",
            "/iap/v1/users/alice/account-tokens",
            body: #"{"appAccountToken":"\#(World.accountToken("alice").uuidString)"}"#
        )
        #expect(bound.status == 201, "\(bound.text)")
        let purchase = try await world.buy("coins.100", user: "alice")
        let signed = try #require(await world.appStore.drainNotifications().last)
        return (purchase.transactionId, signed)
    }

    /// The same compact JWS with one character of its signature changed.
    static func forged(_ jws: String) throws -> String {
        var segments = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(segments.count == 3)
        var signature = Array(segments[2])
        let middle = signature.count / 2
        signature[middle] = signature[middle] == "A" ? "B" : "A"
        segments[2] = String(signature)
        return segments.joined(separator: ".")
    }

    @Test func aSignedNotificationIsProcessedOnceAndItsDuplicateAcknowledged() async throws {
        let world = try World()
        let (transactionId, signed) = try await Self.boundPurchaseNotification(world)

        let first = try await world.notify(signed)
        #expect(first.status == 200)
        #expect(first.headers["Content-Type"] == "application/json")
        #expect(first.text == #"{"outcome":"processed"}"#)
        #expect(world.wallet.balance("alice") == 100)
        #expect(await world.ledger.entry(transactionId: transactionId)?.userId == "alice")

        let again = try await world.notify(signed)
        #expect(again.status == 200)
        #expect(again.text == #"{"outcome":"duplicate"}"#)
        #expect(world.wallet.calls.count == 1)
        #expect(world.metrics.notifications.value(labels: ["unknown", "duplicate"]) == 1)
    }

    @Test func aForgedNotificationIsRefused400WithTheExactNeutralBody() async throws {
        let world = try World()
        let (transactionId, signed) = try await Self.boundPurchaseNotification(world)
        let answer = try await world.notify(try Self.forged(signed))
        #expect(answer.status == 400)
        #expect(answer.text == #"{"code":"signatureInvalid","error":"the notification did not verify"}"#)
        #expect(answer.headers["Retry-After"] == nil)
        #expect(await world.ledger.entry(transactionId: transactionId) == nil)
        #expect(world.wallet.calls.isEmpty)
        #expect(world.metrics.verificationFailures.value(labels: ["signatureInvalid"]) == 1)
    }

    @Test func aBodyThatIsNotANotificationIsRefused400() async throws {
        let world = try World()
        for body in ["not json", "{}", #"{"signedPayload":"a.b.c"}"#, #"{"signedPayload":42}"#] {
            let answer = try await world.client.send("POST", "/iap/v1/notifications", body: body)
            #expect(answer.status == 400, "\(body): \(answer.text)")
            let failure = try answer.failure()
            #expect(failure.code != nil, "\(body)")
            #expect(
                [#"the body is not {"signedPayload": "..."} of this app"#, "the notification did not verify"]
                    .contains(failure.error),
                "\(body): \(answer.text)"
            )
        }
        // A body that is not a notification at all says so (`malformedRequest`); signed data that does not verify
        // says that instead.
        for body in ["not json", "{}"] {
            let answer = try await world.client.send("POST", "/iap/v1/notifications", body: body)
            #expect(
                answer.text
                    == #"{"code":"malformedRequest","error":"the body is not {\"signedPayload\": \"...\"} of this app"}"#
            )
        }
        let garbled = try await world.client.send("POST", "/iap/v1/notifications", body: #"{"signedPayload":"a.b.c"}"#)
        #expect(garbled.text == #"{"code":"malformedSignedData","error":"the notification did not verify"}"#)
    }

    @Test func aLedgerFailureIsAnswered503WithRetryAfterAndNoInternalDetailThenProcessedWhenSentAgain() async throws {
        let world = try World()
        let (_, signed) = try await Self.boundPurchaseNotification(world)
        for operation in FaultInjectingEntitlementStore.Operation.allCases {
            world.store.inject(.beforeApplying, on: operation, count: 10)
        }
        let answer = try await world.notify(signed)
        world.store.clearFaults()
        #expect(answer.status == 503)
        #expect(answer.headers["Retry-After"] == "5")
        #expect(
            answer.text
                == #"{"code":"storageFailure","error":"the notification could not be recorded now; send it again"}"#
        )
        #expect(!answer.text.contains("injected"))
        #expect(world.wallet.calls.isEmpty)
        // The detail went to the operator.
        #expect(world.eventLog.contains("injected fault"))

        let retried = try await world.notify(signed)
        #expect(retried.text == #"{"outcome":"processed"}"#)
        #expect(world.wallet.balance("alice") == 100)
    }
}
