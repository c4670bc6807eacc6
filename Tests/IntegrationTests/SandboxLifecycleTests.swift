import Foundation
import IAPCore
import IAPTestSupport
import IAPTransportURLSession
import Testing

/// Every lifecycle the emulator rehearses, seen by the server `iap sandbox` wires to it: the notifications arrive by
/// themselves, and the entitlements (evaluated at the emulator's clock) and histories show each one.
@Suite("iap sandbox: the lifecycles reach the server", .serialized)
struct SandboxLifecycleTests {
    /// The sandbox, and requests to its two halves.
    struct Wired {
        let sandbox: SandboxCommandTests.Sandbox
        let emulator: String
        let server: String
        let control: [String: String]
        let service: [String: String]

        init(_ sandbox: SandboxCommandTests.Sandbox) throws {
            self.sandbox = sandbox
            emulator = try sandbox.url("emulator")
            server = try sandbox.url("server")
            control = ["X-Emulator-Control-Token": try sandbox.secret("emulator-control-token")]
            service = ["Authorization": "Bearer \(try sandbox.secret("service-token"))"]
        }

        /// A control request; its JSON answer.
        @discardableResult
        func act(_ path: String, _ body: String = "") async throws -> [String: Any] {
            let answer = try await SandboxCommandTests.send(
                "POST",
                emulator + "/emulator/v1/" + path,
                headers: control,
                body: body
            )
            try #require(answer.status == 200, "\(path): \(String(decoding: answer.body, as: UTF8.self))")
            return (try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]) ?? [:]
        }

        /// Binds a fresh token to `user` on the server and buys `json`'s product with it for the emulator account
        /// named like the user.
        func buy(_ user: String, _ fields: String) async throws -> [String: Any] {
            let token = UUID().uuidString.lowercased()
            let bound = try await SandboxCommandTests.send(
                "POST",
                server + "/iap/v1/users/\(user)/account-tokens",
                headers: service,
                body: #"{"appAccountToken": "\#(token)"}"#
            )
            try #require(bound.status == 201)
            return try await act(
                "purchases",
                #"{"account": "\#(user)", "appAccountToken": "\#(token)", \#(fields)}"#
            )
        }

        /// The user's entitlement row for a product (or its group), at the emulator's clock, once `ready` holds
        /// (the notifications arrive by themselves, a moment later).
        func row(
            _ user: String,
            _ productId: String,
            until ready: ([String: Any]) -> Bool = { _ in true }
        ) async throws -> [String: Any] {
            var last: [String: Any] = [:]
            for _ in 0..<100 {
                let clock = try await SandboxCommandTests.send("GET", emulator + "/emulator/v1/clock", headers: control)
                let now = try #require((try JSONSerialization.jsonObject(with: clock.body) as? [String: Any])?["now"])
                let answer = try await SandboxCommandTests.send(
                    "GET",
                    server + "/iap/v1/users/\(user)/entitlements?at=\(now)",
                    headers: service
                )
                let listing = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
                let rows = listing?["entitlements"] as? [[String: Any]] ?? []
                if let row = rows.first(where: { $0["productId"] as? String == productId }) {
                    last = row
                    if ready(row) { return row }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("\(user) \(productId) never got there: \(last)")
            return last
        }

        static func state(_ expected: String) -> ([String: Any]) -> Bool {
            { $0["state"] as? String == expected }
        }
    }

    @Test func everyLifecycleReachesTheServerAndItsEntitlements() async throws {
        let parent = FileManager.default.temporaryDirectory.appending(path: "sandbox-life-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let sandbox = try await SandboxCommandTests.Sandbox.start(
            parent.appending(path: "state"),
            ["--reconcile-every", "off", "--on-rescind-consent", "revoke"]
        )
        defer { sandbox.process.stop() }
        let wired = try Wired(sandbox)

        // Introductory free trial, then a promotional offer and an upgrade with an offer (OFFER_REDEEMED UPGRADE).
        _ = try await wired.buy("ann", #""productId": "plus.monthly""#)
        #expect((try await wired.row("ann", "plus.monthly"))["hasAccess"] as? Bool == true)
        try await wired.act(
            "purchases",
            #"{"productId": "plus.monthly", "account": "ann", "offerId": "plus.monthly.promo"}"#
        )
        try await wired.act(
            "purchases",
            #"{"productId": "plus.yearly", "account": "ann", "offerId": "plus.yearly.promo"}"#
        )
        #expect((try await wired.row("ann", "plus.yearly"))["hasAccess"] as? Bool == true)

        // Offer code by a newcomer; downgrade at the next renewal.
        _ = try await wired.buy("bob", #""productId": "plus.monthly", "offerId": "plus.monthly.code""#)
        #expect((try await wired.row("bob", "plus.monthly"))["hasAccess"] as? Bool == true)
        let yearly = try await wired.buy("dan", #""productId": "pro.yearly""#)
        try await wired.act("purchases", #"{"productId": "pro.monthly", "account": "dan"}"#)
        let danOriginal = try #require(yearly["originalTransactionId"] as? String)
        try await wired.act("subscriptions/\(danOriginal)/renew")
        #expect((try await wired.row("dan", "pro.monthly"))["hasAccess"] as? Bool == true)

        // Price increase without consent: expired at the renewal.
        let raised = try await wired.buy("eve", #""productId": "pro.monthly""#)
        let eveOriginal = try #require(raised["originalTransactionId"] as? String)
        try await wired.act("subscriptions/\(eveOriginal)/price-increase", #"{"price": 12990, "needsConsent": true}"#)
        try await wired.act("subscriptions/\(eveOriginal)/renew")
        #expect(
            (try await wired.row("eve", "pro.monthly", until: Wired.state("expired")))["state"] as? String == "expired"
        )

        // Refund, then the refund reversed.
        let refunded = try await wired.buy("fay", #""productId": "premium""#)
        let fayTransaction = try #require(refunded["transactionId"] as? String)
        try await wired.act("transactions/\(fayTransaction)/refund")
        #expect((try await wired.row("fay", "premium", until: Wired.state("revoked")))["hasAccess"] as? Bool == false)
        // Days pass between a refund and its reversal; the server applies only signed data newer than it holds.
        try await wired.act("clock/advance", #"{"seconds": 86400}"#)
        try await wired.act("transactions/\(fayTransaction)/refund-reversed")
        #expect((try await wired.row("fay", "premium", until: Wired.state("active")))["hasAccess"] as? Bool == true)

        // A 12-month commitment billed monthly.
        _ = try await wired.buy("gus", #""productId": "studio.monthly""#)
        let committed = try await wired.row("gus", "studio.monthly") { $0["commitmentRenewalsOwed"] != nil }
        #expect(committed["commitmentRenewalsOwed"] as? Int == 11)

        // A parent rescinds consent: with --on-rescind-consent revoke, the account's purchases are withdrawn.
        _ = try await wired.buy("kid", #""productId": "premium""#)
        #expect((try await wired.row("kid", "premium"))["hasAccess"] as? Bool == true)
        try await wired.act("accounts/kid/rescind-consent")
        #expect((try await wired.row("kid", "premium", until: Wired.state("revoked")))["hasAccess"] as? Bool == false)
        let history = try await SandboxCommandTests.send(
            "GET",
            wired.server + "/iap/v1/users/kid/history",
            headers: wired.service
        )
        #expect(String(decoding: history.body, as: UTF8.self).contains("consentRescindedAt"))

        // Family Sharing: the member's shared copy reaches the server (awaiting its owner), and leaving revokes it.
        _ = try await wired.buy("pat", #""productId": "premium""#)
        try await wired.act("family/members", #"{"organizer": "pat", "member": "kim"}"#)
        try await wired.act("family/members/kim/remove")
        var delivered = false
        for _ in 0..<100 where !delivered {
            try await Task.sleep(for: .milliseconds(100))
            let notifications = try await SandboxCommandTests.send(
                "GET",
                wired.emulator + "/emulator/v1/notifications",
                headers: wired.control
            )
            let items = try JSONSerialization.jsonObject(with: notifications.body) as? [[String: Any]] ?? []
            let revokes = items.filter { $0["notificationType"] as? String == "REVOKE" }
            delivered =
                !revokes.isEmpty
                && revokes.allSatisfy { item in
                    let attempts = item["sendAttempts"] as? [[String: Any]] ?? []
                    return attempts.contains { $0["sendAttemptResult"] as? String == "SUCCESS" }
                }
        }
        #expect(delivered, "the server took every REVOKE of the family's shared purchases")
    }
}
