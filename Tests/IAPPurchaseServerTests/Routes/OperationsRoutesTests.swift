import Foundation
import IAPCore
import IAPHTTPServer
import IAPInMemory
import IAPPurchaseServer
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

/// `GET /healthz`, `/readyz` and `/metrics` through the router: what a load balancer and a scraper read.
@Suite("Routes: health, readiness and metrics")
struct OperationsRoutesTests {
    typealias World = PurchaseServerWorld

    @Test func healthzAnswers200WhateverTheReadiness() async throws {
        let world = try World(ready: false)
        for _ in 0..<2 {
            let answer = try await world.client.send("GET", "/healthz")
            #expect(answer.status == 200)
            #expect(answer.text == "ok\n")
            #expect(answer.headers["Content-Type"] == "text/plain; charset=utf-8")
            world.readiness.markStopping()
        }
    }

    @Test func readyzIs503UntilReadyListsDegradedChecksAnd503AgainForGoodOnceStopping() async throws {
        let world = try World(ready: false)
        func readyz() async throws -> TestResponse { try await world.client.send("GET", "/readyz") }

        let starting = try await readyz()
        #expect(starting.status == 503 && starting.text == "not ready\n")
        world.readiness.markReady()
        let ready = try await readyz()
        #expect(ready.status == 200 && ready.text == "ready\n")

        // A failing check that leaves purchases flowing: still ready, and listed.
        world.readiness.setCheck("support-audit", failing: "the support audit does not match the ledger")
        world.readiness.setCheck("a-check", failing: "it fails")
        let degraded = try await readyz()
        #expect(degraded.status == 200)
        #expect(
            degraded.text
                == "ready\ndegraded: a-check: it fails\n"
                + "degraded: support-audit: the support audit does not match the ledger\n"
        )
        world.readiness.setCheck("a-check", failing: nil)
        #expect(
            try await readyz().text == "ready\ndegraded: support-audit: the support audit does not match the ledger\n"
        )

        world.readiness.markStopping()
        #expect(try await readyz().status == 503)
        world.readiness.markReady()
        let stopping = try await readyz()
        #expect(stopping.status == 503 && stopping.text == "not ready\n")
        // Purchases are still answered while draining.
        let purchase = try await world.buy("coins.100", user: "alice")
        #expect(try await world.submit(purchase.signedTransaction, as: "alice").status == 200)
    }

    @Test func theClaimGaugesCountDeliveriesUnderWayAndThoseWhoseDelivererStopped() async throws {
        let ledger = InMemoryEntitlementStore()
        let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
        for (id, expiry) in [("9001", 60.0), ("9002", -60.0), ("9003", -120.0)] {
            var entry = LedgerEntry(
                transaction: TransactionPayload(originalTransactionId: id, transactionId: id, productId: "coins.100"),
                transactionId: id,
                originalTransactionId: id,
                userId: "alice",
                productId: "coins.100",
                recordedAt: clock.now
            )
            entry.deliveryAttempts = 1
            entry.nextAttemptAt = clock.now.addingTimeInterval(expiry)
            _ = try await ledger.insert(entry)
        }
        let metrics = try PurchaseServerMetrics()
        try await metrics.refreshLedgerGauges(from: ledger, clock: clock)
        let exposition = PrometheusExposition(metrics.registry.exposition())
        #expect(exposition.problems.isEmpty, "\(exposition.problems)")
        #expect(exposition.value("iap_claimed_deliveries") == 1)
        #expect(exposition.value("iap_stale_claims") == 2)
        #expect(exposition.value("iap_retry_queue_depth") == 0)
    }

    @Test func aFreshServerExposesEveryFamilyInThePrometheusTextFormat() async throws {
        let world = try World()
        let answer = try await world.client.send("GET", "/metrics")
        #expect(answer.status == 200)
        #expect(answer.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        let exposition = PrometheusExposition(answer.text)
        #expect(exposition.problems.isEmpty, "\(exposition.problems)")
        for name in [
            "iap_submissions_total", "iap_notifications_total", "iap_webhook_requests_total", "iap_retry_queue_depth",
            "iap_dead_letters", "iap_verification_failures_total", "iap_http_request_duration_seconds",
            "iap_http_responses_total", "iap_support_audit_refused", "iap_unknown_product_purchases",
            "iap_reconciliations_total", "iap_reconciliation_alarms_total", "iap_claimed_deliveries",
            "iap_stale_claims",
        ] {
            #expect(exposition.family(name) != nil, "\(name)")
        }
        for outcome in TransactionSubmissionResult.Outcome.allCases {
            #expect(exposition.value("iap_submissions_total", ["outcome": outcome.rawValue]) == 0)
        }
        #expect(exposition.value("iap_retry_queue_depth") == 0)
    }

    @Test func metricsCountRequestsByRoutePatternAndOutcomeNeverByUser() async throws {
        let world = try World()
        let purchase = try await world.buy("coins.100", user: "alice")
        #expect(try await world.submit(purchase.signedTransaction, as: "alice").status == 200)
        #expect(try await world.submit(purchase.signedTransaction, as: nil).status == 401)
        #expect(try await world.client.send("GET", "/iap/v1/users/alice/entitlements").status == 401)
        #expect(try await world.service("GET", "/iap/v1/users/alice/entitlements").status == 200)
        let parked = try await world.buy(World.unknownProductId, user: "alice")
        #expect(try await world.submit(parked.signedTransaction, as: "alice").status == 202)
        #expect(try await world.notify("a.b.c").status == 400)

        // One scrape: the ledger's gauges are read at most once a second.
        let answer = try await world.client.send("GET", "/metrics")
        let exposition = PrometheusExposition(answer.text)
        #expect(exposition.problems.isEmpty, "\(exposition.problems)")
        #expect(exposition.value("iap_submissions_total", ["outcome": "delivered"]) == 1)
        #expect(exposition.value("iap_submissions_total", ["outcome": "rejected"]) == 1)
        #expect(exposition.value("iap_submissions_total", ["outcome": "deferred"]) == 1)
        #expect(exposition.value("iap_notifications_total", ["type": "unknown", "outcome": "rejected"]) == 1)
        #expect((exposition.value("iap_verification_failures_total", ["code": "malformedSignedData"]) ?? 0) >= 1)
        let responses = "iap_http_responses_total"
        #expect(exposition.value(responses, ["route": "/iap/v1/transactions", "status": "200"]) == 1)
        #expect(exposition.value(responses, ["route": "/iap/v1/transactions", "status": "401"]) == 1)
        #expect(exposition.value(responses, ["route": "/iap/v1/transactions", "status": "202"]) == 1)
        let entitlements = "/iap/v1/users/{userId}/entitlements"
        #expect(exposition.value(responses, ["route": entitlements, "status": "401"]) == 1)
        #expect(exposition.value(responses, ["route": entitlements, "status": "200"]) == 1)
        #expect(exposition.value(responses, ["route": "/iap/v1/notifications", "status": "400"]) == 1)
        #expect(
            exposition.value("iap_http_request_duration_seconds_count", ["route": "/iap/v1/transactions"]) == 3
        )
        // The purchase parked for a product the catalog does not know.
        #expect(exposition.value("iap_unknown_product_purchases") == 1)
        // The scrape itself is counted once answered.
        let next = PrometheusExposition(try await world.client.send("GET", "/metrics").text)
        #expect(next.value(responses, ["route": "/metrics", "status": "200"]) == 1)
        // No user, transaction, token or secret in it.
        for secret in ["alice", World.serviceToken, World.userSecret, purchase.transactionId] {
            #expect(!answer.text.contains(secret), "\(secret)")
        }
    }
}
