import Foundation
import IAPCore
import IAPInMemory
import IAPServerAPI
import IAPTesting
import Testing

@Suite("Renewal date extender")
struct RenewalDateExtenderTests {
    typealias H = APIHarness

    static let subscription = "2000000000000001"

    static func answer(_ success: Bool = true, effective: Int64 = 1_700_864_000_000) -> String {
        #"{"originalTransactionId":"\#(subscription)","webOrderLineItemId":"9993","success":\#(success),"effectiveDate":\#(effective)}"#
    }

    static func expectExtend(_ h: H, days: Int, reason: Int, id: String) -> ScriptedTransport.Exchange {
        h.transport.expect(
            method: "PUT",
            path: "/inApps/v1/subscriptions/extend/\(subscription)",
            body: .json(#"{"extendByDays":\#(days),"extendReasonCode":\#(reason),"requestIdentifier":"\#(id)"}"#)
        )
    }

    @Test func requestsOutsideApplesLimitsAreRefusedBeforeAnyCall() async throws {
        let h = try H()
        let extender = RenewalDateExtender(client: h.client, store: InMemoryRenewalExtensionStore(), clock: h.wall)
        let cases: [(String, Int, ExtendReasonCode, String)] = [
            (Self.subscription, 0, .customerSatisfaction, "r1"),
            (Self.subscription, 91, .customerSatisfaction, "r1"),
            (Self.subscription, 30, ExtendReasonCode(rawValue: 4), "r1"),
            (Self.subscription, 30, ExtendReasonCode(rawValue: -1), "r1"),
            (Self.subscription, 30, .other, ""),
            (Self.subscription, 30, .other, String(repeating: "x", count: 129)),
            ("", 30, .other, "r1"),
            ("12ab", 30, .other, "r1"),
        ]
        for (original, days, reason, id) in cases {
            await #expect(throws: IAPError(.invalidArgument)) {
                try await extender.extend(
                    originalTransactionId: original,
                    days: days,
                    reason: reason,
                    requestIdentifier: id
                )
            }
        }
        #expect(h.transport.requests.isEmpty)
    }

    @Test func aRetryWithTheSameIdentifierIsAnsweredWithoutASecondCall() async throws {
        let h = try H()
        let extender = RenewalDateExtender(client: h.client, store: InMemoryRenewalExtensionStore(), clock: h.wall)
        Self.expectExtend(h, days: 30, reason: 3, id: "outage-1").respond(status: 200, body: Self.answer())
        let first = try await extender.extend(
            originalTransactionId: Self.subscription,
            days: 30,
            reason: .serviceIssueOrOutage,
            requestIdentifier: "outage-1"
        )
        #expect(first.state == .succeeded)
        #expect(first.effectiveDate == Date(millisecondsSince1970: 1_700_864_000_000))
        let again = try await extender.extend(
            originalTransactionId: Self.subscription,
            days: 30,
            reason: .serviceIssueOrOutage,
            requestIdentifier: "outage-1"
        )
        #expect(again == first)
        #expect(h.transport.requests.count == 1)
        await #expect(throws: IAPError(.requestIdentifierReused)) {
            try await extender.extend(
                originalTransactionId: Self.subscription,
                days: 31,
                reason: .serviceIssueOrOutage,
                requestIdentifier: "outage-1"
            )
        }
        try h.transport.verify()
    }

    @Test func aThirdExtensionWithinAYearIsRefusedAndAllowedAfterIt() async throws {
        let h = try H()
        let extender = RenewalDateExtender(client: h.client, store: InMemoryRenewalExtensionStore(), clock: h.wall)
        for id in ["a", "b"] {
            Self.expectExtend(h, days: 10, reason: 1, id: id).respond(status: 200, body: Self.answer())
            _ = try await extender.extend(
                originalTransactionId: Self.subscription,
                days: 10,
                reason: .customerSatisfaction,
                requestIdentifier: id
            )
            h.wall.advance(by: .seconds(100 * 86_400))
        }
        await #expect(throws: IAPError(.extensionLimitReached)) {
            try await extender.extend(
                originalTransactionId: Self.subscription,
                days: 10,
                reason: .customerSatisfaction,
                requestIdentifier: "c"
            )
        }
        #expect(h.transport.requests.count == 2)
        // 365 days after the first extension, one slot is free again.
        h.wall.advance(by: .seconds(166 * 86_400))
        Self.expectExtend(h, days: 10, reason: 1, id: "c").respond(status: 200, body: Self.answer())
        let third = try await extender.extend(
            originalTransactionId: Self.subscription,
            days: 10,
            reason: .customerSatisfaction,
            requestIdentifier: "c"
        )
        #expect(third.state == .succeeded)
        try h.transport.verify()
    }

    @Test func applesRefusalIsRecordedAndDoesNotUseASlot() async throws {
        let h = try H()
        let store = InMemoryRenewalExtensionStore()
        let extender = RenewalDateExtender(client: h.client, store: store, clock: h.wall)
        Self.expectExtend(h, days: 10, reason: 1, id: "refused").respond(
            status: 403,
            body: #"{"errorCode":4030004,"errorMessage":"Subscription extensions are not allowed."}"#
        )
        let refused = try await extender.extend(
            originalTransactionId: Self.subscription,
            days: 10,
            reason: .customerSatisfaction,
            requestIdentifier: "refused"
        )
        #expect(refused.state == .failed)
        #expect(refused.error?.contains("apiError") == true)
        let again = try await extender.extend(
            originalTransactionId: Self.subscription,
            days: 10,
            reason: .customerSatisfaction,
            requestIdentifier: "refused"
        )
        #expect(again == refused)
        for id in ["x", "y"] {
            Self.expectExtend(h, days: 10, reason: 1, id: id).respond(status: 200, body: Self.answer())
            #expect(
                try await extender.extend(
                    originalTransactionId: Self.subscription,
                    days: 10,
                    reason: .customerSatisfaction,
                    requestIdentifier: id
                ).state == .succeeded
            )
        }
        #expect(h.transport.requests.count == 3)
        try h.transport.verify()
    }

    @Test func aRequestThatGotNoAnswerIsAskedAgainWithTheSameIdentifier() async throws {
        let h = try H(options: H.options { $0.maximumAttempts = 1 })
        let store = InMemoryRenewalExtensionStore()
        let extender = RenewalDateExtender(client: h.client, store: store, clock: h.wall)
        Self.expectExtend(h, days: 5, reason: 0, id: "lost").fail(with: IAPError(.transportFailure, "reset"))
        await #expect(throws: IAPError(.transportFailure)) {
            try await extender.extend(
                originalTransactionId: Self.subscription,
                days: 5,
                reason: .undeclared,
                requestIdentifier: "lost"
            )
        }
        #expect(await store.record(requestIdentifier: "lost")?.state == .requested)
        Self.expectExtend(h, days: 5, reason: 0, id: "lost").respond(status: 200, body: Self.answer())
        let retried = try await extender.extend(
            originalTransactionId: Self.subscription,
            days: 5,
            reason: .undeclared,
            requestIdentifier: "lost"
        )
        #expect(retried.state == .succeeded)
        #expect(await store.records(originalTransactionId: Self.subscription).count == 1)
        try h.transport.verify()
    }
}
