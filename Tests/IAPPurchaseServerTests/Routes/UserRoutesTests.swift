import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTesting
import Testing

/// `GET /iap/v1/users/{userId}/entitlements` and `/history` through the router: the service token's endpoints.
@Suite("Routes: a user's entitlements and history")
struct UserRoutesTests {
    typealias World = PurchaseServerWorld

    static let userRoutes = ["/iap/v1/users/alice/entitlements", "/iap/v1/users/alice/history"]

    @Test func withoutTheServiceTokenTheyAreRefused401WithAChallengeAndAnAuthRefusedEvent() async throws {
        let world = try World()
        _ = try await world.buyAndSubmit("pro.lifetime", user: "alice")
        let bearers: [String?] = [nil, "wrong-token-of-some-length", try world.userToken("alice"), ""]
        for path in Self.userRoutes {
            for bearer in bearers {
                let answer = try await world.client.send("GET", path, bearer: bearer)
                #expect(answer.status == 401, "\(path) \(bearer ?? "none")")
                #expect(answer.headers["WWW-Authenticate"] == #"Bearer realm="iap""#)
                #expect(
                    answer.text == #"{"code":"unauthenticated","error":"the request is not authorized"}"#,
                    "\(answer.text)"
                )
            }
        }
        let refused = world.events.events(named: "auth.refused")
        #expect(refused.count == Self.userRoutes.count * bearers.count)
        #expect(refused.allSatisfy { $0.outcome == "401" && $0.errorCode == "unauthenticated" })
        // The event names the endpoint, not the user.
        #expect(refused.contains { $0.message == "GET /iap/v1/users/{userId}/entitlements: no valid service token" })
        #expect(!world.eventLog.contains("wrong-token-of-some-length"))
    }

    @Test func theEntitlementsListWhatTheUserHasNowAndAtAnotherInstant() async throws {
        let world = try World()
        let plus = try await world.buyAndSubmit("plus.monthly", user: "alice")
        _ = try await world.buyAndSubmit("coins.100", user: "alice")

        let now = try await world.service("GET", "/iap/v1/users/alice/entitlements")
        #expect(now.status == 200)
        #expect(now.headers["Content-Type"] == "application/json")
        let listing = try now.json()
        #expect(listing["user"] as? String == "alice")
        #expect(listing["at"] as? Int64 == world.clock.now.millisecondsSince1970)
        #expect((listing["balances"] as? [String: Int64])?["coins.100"] == 100)
        let rows = try #require(listing["entitlements"] as? [[String: Any]])
        let row = try #require(rows.first { $0["productId"] as? String == "plus.monthly" })
        #expect(row["hasAccess"] as? Bool == true)
        #expect(row["type"] as? String == "autoRenewable")
        #expect(row["originalTransactionId"] as? String == plus.originalTransactionId)

        // Forty days on, the month has run out.
        let later = world.clock.now.millisecondsSince1970 + 40 * 86_400_000
        let then = try await world.service("GET", "/iap/v1/users/alice/entitlements?at=\(later)")
        #expect(then.status == 200)
        #expect(try then.json()["at"] as? Int64 == later)
        let laterRows = try #require(try then.json()["entitlements"] as? [[String: Any]])
        #expect(laterRows.first { $0["productId"] as? String == "plus.monthly" }?["hasAccess"] as? Bool == false)

        for bad in ["abc", "-1", "1.5", "32503680000000", ""] {
            let answer = try await world.service("GET", "/iap/v1/users/alice/entitlements?at=\(bad)")
            #expect(answer.status == 400, "at=\(bad)")
            #expect(
                answer.text == #"{"code":"invalidArgument","error":"at is milliseconds since 1970"}"#,
                "\(answer.text)"
            )
        }
    }

    @Test func aUserWithNothingHasAnEmptyListingAndAnEmptyHistory() async throws {
        let world = try World()
        let listing = try await world.service("GET", "/iap/v1/users/nobody/entitlements")
        #expect(listing.status == 200)
        #expect((try listing.json()["entitlements"] as? [Any])?.isEmpty == true)
        let history = try await world.service("GET", "/iap/v1/users/nobody/history")
        #expect(history.status == 200)
        #expect(try history.json() as NSDictionary == ["user": "nobody", "items": [], "nextCursor": NSNull()])
    }

    @Test func theHistoryPagesByLimitAndCursor() async throws {
        let world = try World()
        var bought: [String] = []
        for product in ["coins.100", "pro.lifetime", "coins.100"] {
            bought.append(try await world.buyAndSubmit(product, user: "alice").transactionId)
        }
        let first = try await world.service("GET", "/iap/v1/users/alice/history?limit=2")
        #expect(first.status == 200)
        let page = try first.json()
        #expect(page["user"] as? String == "alice")
        let items = try #require(page["items"] as? [[String: Any]])
        #expect(items.count == 2)
        let cursor = try #require(page["nextCursor"] as? String)
        let escaped = try #require(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let second = try await world.service("GET", "/iap/v1/users/alice/history?limit=2&cursor=\(escaped)")
        #expect(second.status == 200)
        let rest = try #require(try second.json()["items"] as? [[String: Any]])
        #expect(rest.count == 1)
        #expect(try second.json()["nextCursor"] is NSNull)
        let seen = (items + rest).compactMap { $0["transactionId"] as? String }
        #expect(Set(seen) == Set(bought) && seen.count == 3)
        #expect((items + rest).allSatisfy { $0["state"] as? String == "delivered" })

        // The default is 20, the bounds 1 and 200.
        #expect((try await world.service("GET", "/iap/v1/users/alice/history").json()["items"] as? [Any])?.count == 3)
        #expect(try await world.service("GET", "/iap/v1/users/alice/history?limit=1").status == 200)
        #expect(try await world.service("GET", "/iap/v1/users/alice/history?limit=200").status == 200)
        for bad in ["0", "201", "-1", "abc", ""] {
            let answer = try await world.service("GET", "/iap/v1/users/alice/history?limit=\(bad)")
            #expect(answer.status == 400, "limit=\(bad)")
            #expect(
                answer.text == #"{"code":"invalidArgument","error":"limit is a whole number from 1 to 200"}"#,
                "\(answer.text)"
            )
        }
        let empty = try await world.service("GET", "/iap/v1/users/alice/history?cursor=")
        #expect(empty.status == 400)
        #expect(try empty.failure().error == "cursor is the nextCursor of the page before")
        let forged = try await world.service("GET", "/iap/v1/users/alice/history?cursor=bm90LWEtY3Vyc29y")
        #expect(forged.status == 400)
        #expect(try forged.failure().error == "cursor is not a cursor of this user's history")
    }

    @Test func anInvalidUserIdIsAnswered400OnEveryUserRoute() async throws {
        let world = try World()
        let invalid = ["unowned:2000000001", "a%01b", String(repeating: "u", count: 257)]
        for userId in invalid {
            for (method, suffix, body) in [
                ("GET", "entitlements", ""), ("GET", "history", ""),
                ("POST", "account-tokens", #"{"appAccountToken":"\#(UUID().uuidString)"}"#),
            ] {
                let answer = try await world.service(method, "/iap/v1/users/\(userId)/\(suffix)", body: body)
                #expect(answer.status == 400, "\(userId) \(suffix)")
                #expect(
                    answer.text == #"{"code":"invalidArgument","error":"the user id is not valid"}"#,
                    "\(answer.text)"
                )
            }
        }
        // A user id of 256 characters is valid.
        let longest = String(repeating: "u", count: 256)
        #expect(try await world.service("GET", "/iap/v1/users/\(longest)/entitlements").status == 200)
    }

    @Test func aLedgerFailureIsAnswered503WithRetryAfterAndTheDetailGoesToTheOperator() async throws {
        let world = try World()
        _ = try await world.buyAndSubmit("coins.100", user: "alice")
        world.store.inject(.beforeApplying, on: .history, count: 10)
        let answer = try await world.service("GET", "/iap/v1/users/alice/history")
        world.store.clearFaults()
        #expect(answer.status == 503)
        #expect(answer.headers["Retry-After"] == "5")
        #expect(
            answer.text == #"{"code":"storageFailure","error":"the ledger is not available now; try again"}"#
        )
        let failed = try #require(world.events.events(named: "service.failed").last)
        #expect(failed.message?.hasPrefix("/iap/v1/users/{userId}/history: ") == true)
        #expect(failed.message?.contains("injected fault") == true)
    }

    @Test func anAppleAccountsPurchasesAreListedByItsAppTransactionIdWithTheirOwners() async throws {
        let world = try World()
        // alice buys on the Apple Account "family"; bob, signed in to the app on the same device, buys on it too.
        let first = try await world.appStore.purchase(
            productId: "coins.100",
            account: "family",
            appAccountToken: World.accountToken("alice")
        )
        let second = try await world.appStore.purchase(
            productId: "pro.lifetime",
            account: "family",
            appAccountToken: World.accountToken("bob")
        )
        let other = try await world.buyAndSubmit("coins.100", user: "carol")
        for (result, user) in [(first, "alice"), (second, "bob")] {
            let bought = try #require(result.transaction)
            #expect(try await world.submit(bought.signedTransaction, as: user).status == 200)
        }
        let account = try #require(first.transaction?.payload.appTransactionId)
        #expect(other.payload.appTransactionId != account)

        let answer = try await world.service("GET", "/iap/v1/app-transactions/\(account)/history")
        #expect(answer.status == 200, "\(answer.text)")
        let json = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
        #expect(json["appTransactionId"] as? String == account)
        let items = try #require(json["items"] as? [[String: Any]])
        // Newest first, each with its owner; nothing of carol's.
        #expect(items.map { $0["userId"] as? String } == ["bob", "alice"])
        #expect(items.map { $0["productId"] as? String } == ["pro.lifetime", "coins.100"])

        let unknown = try await world.service("GET", "/iap/v1/app-transactions/999/history")
        #expect(unknown.status == 200 && unknown.text == #"{"appTransactionId":"999","items":[]}"#)
        let bad = try await world.service("GET", "/iap/v1/app-transactions/a%20b/history")
        #expect(bad.status == 400)
        let anonymous = try await world.client.send("GET", "/iap/v1/app-transactions/\(account)/history")
        #expect(anonymous.status == 401)
    }
}
