import Foundation
import IAPCore
import IAPInMemory
import IAPLegacyReceipts
import IAPTestSupport
import Testing

/// The deprecated `VerifyReceiptClient` is a thin wrapper over `VerifyReceiptEngine`, which is `package` and
/// not deprecated: these tests drive the engine, so that `-warnings-as-errors` holds.
@Suite("verifyReceipt")
struct VerifyReceiptTests {
    static let production = URL(string: "https://buy.example.test/verifyReceipt")!
    static let sandbox = URL(string: "https://sandbox.example.test/verifyReceipt")!

    static func engine(
        _ first: VerifyReceiptEngine.Endpoint = .production,
        sharedSecret: String? = "secret",
        transport: ScriptedTransport
    ) -> VerifyReceiptEngine {
        VerifyReceiptEngine(
            first: first,
            sharedSecret: sharedSecret,
            productionURL: production,
            sandboxURL: sandbox,
            requestTimeout: .seconds(5),
            transport: transport
        )
    }

    static let validAnswer = """
        {"status":0,"environment":"Production",
         "receipt":{"receipt_type":"Production","adam_id":1234,"bundle_id":"com.example.app",
           "application_version":"7","original_application_version":"1.0",
           "receipt_creation_date_ms":"1700000000000",
           "in_app":[{"quantity":"1","product_id":"coins","transaction_id":"1000000000000002",
             "original_transaction_id":"1000000000000002","purchase_date_ms":"1690000000000",
             "original_purchase_date_ms":"1690000000000","is_trial_period":"false"}]},
         "latest_receipt_info":[{"quantity":1,"product_id":"pro.monthly","transaction_id":"1000000000000010",
             "original_transaction_id":"1000000000000009","purchase_date_ms":"1695000000000",
             "expires_date_ms":"1697600000000","cancellation_date_ms":"1696000000000","cancellation_reason":"0",
             "web_order_line_item_id":"1000000000000011","subscription_group_identifier":"21000001",
             "in_app_ownership_type":"PURCHASED"}],
         "latest_receipt":"BASE64",
         "pending_renewal_info":[{"auto_renew_product_id":"pro.monthly","product_id":"pro.monthly",
             "original_transaction_id":"1000000000000009","auto_renew_status":"1","expiration_intent":"1",
             "is_in_billing_retry_period":"0"}]}
        """

    static func status(_ status: Int, environment: String = "Production") -> String {
        #"{"status":\#(status),"environment":"\#(environment)"}"#
    }

    @Test func postsTheReceiptAndDecodesWhatAMigrationNeeds() async throws {
        let transport = ScriptedTransport()
        transport.expect(
            method: "POST",
            path: "/verifyReceipt",
            headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: .json(#"{"receipt-data":"UkVDRUlQVA==","password":"secret","exclude-old-transactions":true}"#)
        ).respond(status: 200, body: Self.validAnswer)
        let answer = try await Self.engine(transport: transport)
            .verify(receiptData: "UkVDRUlQVA==", excludeOldTransactions: true)
        try transport.verify()
        #expect(transport.requests.first?.url == Self.production)
        #expect(transport.requests.first?.headers["Authorization"] == nil)
        #expect(answer.status == 0)
        #expect(answer.environment == "Production")
        #expect(answer.receipt?.bundleId == "com.example.app")
        #expect(answer.receipt?.adamId == "1234")
        let inApp = try #require(answer.receipt?.inApp?.first)
        #expect(inApp.transactionId == "1000000000000002")
        #expect(inApp.productId == "coins")
        #expect(inApp.purchaseDateMs == "1690000000000")
        let latest = try #require(answer.latestReceiptInfo?.first)
        #expect(latest.quantity == "1")
        #expect(latest.originalTransactionId == "1000000000000009")
        #expect(latest.expiresDateMs == "1697600000000")
        #expect(latest.cancellationDateMs == "1696000000000")
        #expect(answer.pendingRenewalInfo?.first?.autoRenewStatus == "1")
        #expect(answer.originalTransactionIds == ["1000000000000009", "1000000000000002"])
    }

    @Test func reencodesWithApplesFieldNames() throws {
        let answer = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(Self.validAnswer.utf8))
        let text = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
        for key in [
            "latest_receipt_info", "pending_renewal_info", "in_app", "original_transaction_id", "expires_date_ms",
        ] {
            #expect(text.contains("\"\(key)\""))
        }
    }

    @Test func sandboxReceiptSentToProductionIsRetriedOnSandbox() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: Self.status(21007))
        transport.expect(method: "POST", path: "/verifyReceipt")
            .respond(status: 200, body: Self.status(0, environment: "Sandbox"))
        let answer = try await Self.engine(transport: transport).verify(receiptData: "R", excludeOldTransactions: false)
        try transport.verify()
        #expect(answer.environment == "Sandbox")
        #expect(transport.requests.map(\.url) == [Self.production, Self.sandbox])
        #expect(transport.requests[0].body == transport.requests[1].body)
    }

    @Test func productionReceiptSentToSandboxIsRetriedOnProduction() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "POST", path: "/verifyReceipt")
            .respond(status: 200, body: Self.status(21008, environment: "Sandbox"))
        transport.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: Self.status(0))
        let answer = try await Self.engine(.sandbox, transport: transport)
            .verify(receiptData: "R", excludeOldTransactions: false)
        try transport.verify()
        #expect(answer.environment == "Production")
        #expect(transport.requests.map(\.url) == [Self.sandbox, Self.production])
    }

    @Test func theRedirectHappensOnceAndOnlyInItsDirection() async throws {
        let pingPong = ScriptedTransport()
        pingPong.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: Self.status(21007))
        pingPong.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: Self.status(21007))
        let error = await apiFailure {
            _ = try await Self.engine(transport: pingPong).verify(receiptData: "R", excludeOldTransactions: false)
        }
        try pingPong.verify()
        #expect(error?.apiErrorCode == 21007)
        #expect(error?.message.contains("Sandbox") == true)

        let wrongWay = ScriptedTransport()
        wrongWay.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: Self.status(21008))
        let wrongWayError = await apiFailure {
            _ = try await Self.engine(transport: wrongWay).verify(receiptData: "R", excludeOldTransactions: false)
        }
        try wrongWay.verify()
        #expect(wrongWayError?.code == .apiError)
        #expect(wrongWayError?.apiErrorCode == 21008)
        #expect(wrongWay.requests.count == 1)
    }

    @Test(arguments: [
        (21002, false), (21003, false), (21004, false), (21005, true), (21009, true), (21010, false),
        (21100, true), (21150, true), (21199, true), (21200, false), (21000, false),
    ])
    func statusErrorsSayWhetherARetryCanHelp(status: Int, retryable: Bool) async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: Self.status(status))
        let error = await apiFailure {
            _ = try await Self.engine(transport: transport).verify(receiptData: "R", excludeOldTransactions: false)
        }
        #expect(error?.code == .apiError)
        #expect(error?.apiErrorCode == Int64(status))
        #expect(error?.httpStatus == 200)
        #expect(error?.isRetryable == retryable)
        #expect(error?.message.contains("status \(status)") == true)
    }

    @Test func applesRetryableHintIsHonoured() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "POST", path: "/verifyReceipt")
            .respond(status: 200, body: #"{"status":21002,"is-retryable":true}"#)
        let error = await apiFailure {
            _ = try await Self.engine(transport: transport).verify(receiptData: "R", excludeOldTransactions: false)
        }
        #expect(error?.isRetryable == true)
    }

    @Test func expiredSubscriptionStatusStillCarriesTheReceipt() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "POST", path: "/verifyReceipt")
            .respond(status: 200, body: #"{"status":21006,"receipt":{"bundle_id":"com.example.app"}}"#)
        let answer = try await Self.engine(transport: transport).verify(receiptData: "R", excludeOldTransactions: false)
        #expect(answer.status == 21006)
        #expect(answer.receipt?.bundleId == "com.example.app")
    }

    @Test func httpAndDecodingFailures() async throws {
        let unavailable = ScriptedTransport()
        unavailable.expect(method: "POST", path: "/verifyReceipt").respond(status: 503)
        let httpError = await apiFailure {
            _ = try await Self.engine(transport: unavailable).verify(receiptData: "R", excludeOldTransactions: false)
        }
        #expect(httpError?.code == .apiError)
        #expect(httpError?.httpStatus == 503)
        #expect(httpError?.isRetryable == true)
        #expect(httpError?.apiErrorCode == nil)

        let garbage = ScriptedTransport()
        garbage.expect(method: "POST", path: "/verifyReceipt").respond(status: 200, body: "<html>")
        let decodeError = await apiFailure {
            _ = try await Self.engine(transport: garbage).verify(receiptData: "R", excludeOldTransactions: false)
        }
        #expect(decodeError?.code == .decodingFailure)

        let down = ScriptedTransport()
        down.expect(method: "POST", path: "/verifyReceipt").fail(with: IAPError(.timeout, "slow"))
        let timeout = await apiFailure {
            _ = try await Self.engine(transport: down).verify(receiptData: "R", excludeOldTransactions: false)
        }
        #expect(timeout?.code == .timeout)
    }

    @Test func withoutASharedSecretThePasswordIsLeftOut() async throws {
        let transport = ScriptedTransport()
        transport.expect(
            method: "POST",
            path: "/verifyReceipt",
            body: .json(#"{"receipt-data":"R","exclude-old-transactions":false}"#)
        ).respond(status: 200, body: Self.status(0))
        _ = try await Self.engine(sharedSecret: nil, transport: transport)
            .verify(receiptData: "R", excludeOldTransactions: false)
        try transport.verify()
        let empty = await apiFailure {
            _ = try await Self.engine(transport: ScriptedTransport()).verify(
                receiptData: "",
                excludeOldTransactions: false
            )
        }
        #expect(empty?.code == .invalidArgument)
    }
}
