import Foundation
import IAPCore
import IAPInMemory
import IAPServerAPI
import IAPTestSupport
import IAPTesting
import Testing

@Suite("AppStoreServerAPIClient errors and retries")
struct AppStoreServerAPIClientErrorTests {
    typealias H = APIHarness

    struct ErrorFixture: Sendable, CustomTestStringConvertible {
        let fixture: String
        let status: Int
        let code: APIErrorCode
        let message: String
        let retryable: Bool
        var testDescription: String { fixture }
    }

    static let errorFixtures: [ErrorFixture] = [
        ErrorFixture(
            fixture: "apiException",
            status: 500,
            code: .generalInternal,
            message: "5000000 GeneralInternalError: An unknown error occurred.",
            retryable: true
        ),
        ErrorFixture(
            fixture: "apiTooManyRequestsException",
            status: 429,
            code: .rateLimitExceeded,
            message: "4290000 RateLimitExceededError: Rate limit exceeded.",
            retryable: true
        ),
        ErrorFixture(
            fixture: "apiUnknownError",
            status: 400,
            code: APIErrorCode(rawValue: 9_990_000),
            message: "9990000 UnknownError: Testing error.",
            retryable: false
        ),
        ErrorFixture(
            fixture: "transactionIdNotFoundError",
            status: 404,
            code: .transactionIdNotFound,
            message: "4040010 TransactionIdNotFoundError: Transaction id not found.",
            retryable: false
        ),
        ErrorFixture(
            fixture: "invalidTransactionIdError",
            status: 400,
            code: .invalidTransactionId,
            message: "4000006 InvalidTransactionIdError: Invalid transaction id.",
            retryable: false
        ),
        ErrorFixture(
            fixture: "familyTransactionNotSupportedError",
            status: 400,
            code: .familyTransactionNotSupported,
            message:
                "4000185 FamilyTransactionNotSupportedError: Invalid request. Family Sharing transactions aren't "
                + "supported by this endpoint.",
            retryable: false
        ),
        ErrorFixture(
            fixture: "transactionIdNotOriginalTransactionId",
            status: 400,
            code: .transactionIdNotOriginalTransactionId,
            message:
                "4000187 TransactionIdIsNotOriginalTransactionIdError: Invalid request. The transaction ID provided "
                + "is not an original transaction ID.",
            retryable: false
        ),
        ErrorFixture(
            fixture: "invalidAppAccountTokenUUIDError",
            status: 400,
            code: .invalidAppAccountTokenUUID,
            message:
                "4000183 InvalidAppAccountTokenUUIDError: Invalid request. The app account token field must be a "
                + "valid UUID.",
            retryable: false
        ),
        ErrorFixture(
            fixture: "appTransactionDoesNotExistError",
            status: 404,
            code: .appTransactionDoesNotExist,
            message: "4040019 AppTransactionDoesNotExistError: No AppTransaction exists for the customer.",
            retryable: false
        ),
    ]

    @Test(arguments: errorFixtures)
    func errorBodiesAreMapped(_ fixture: ErrorFixture) async throws {
        let h = try H(options: H.options { $0.maximumAttempts = 1 })
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: fixture.status, body: try fixtureText(fixture.fixture))
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.code == .apiError)
        #expect(error.httpStatus == fixture.status)
        #expect(error.apiErrorCode == fixture.code.rawValue)
        #expect(error.apiError == fixture.code)
        #expect(error.message == fixture.message)
        #expect(error.isRetryable == fixture.retryable)
        #expect(error.retryAfter == nil)
        #expect(h.transport.requests.count == 1)
    }

    @Test func unknownCodeIsKeptButNotKnown() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 400, body: try fixtureText("apiUnknownError"))
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.apiErrorCode == 9_990_000)
        #expect(error.apiError?.isKnown == false)
        #expect(error.apiError?.name == nil)
    }

    @Test func retriesA500ThenSucceeds() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 500, body: try fixtureText("apiException"))
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 200, body: try fixtureText("transactionInfoResponse"))
        let response = try await h.client.transactionInfo(transactionId: "1")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
        #expect(h.clock.sleeps == [.milliseconds(500)])
        try h.transport.verify()
    }

    @Test func backoffDoublesUntilAttemptsRunOut() async throws {
        let h = try H()
        for _ in 0..<4 {
            h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
                .respond(status: 503, body: "<html>unavailable</html>")
        }
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.httpStatus == 503)
        #expect(error.apiErrorCode == nil)
        #expect(error.isRetryable)
        #expect(error.message == "HTTP 503")
        #expect(h.clock.sleeps == [.milliseconds(500), .seconds(1), .seconds(2)])
        try h.transport.verify()
    }

    @Test func jitterStaysWithinItsSpread() async throws {
        let h = try H(options: H.options { $0.jitter = 0.5 })
        for _ in 0..<4 {
            h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 500)
        }
        _ = await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") }
        let sleeps = h.clock.sleeps
        #expect(sleeps.count == 3)
        for (index, sleep) in sleeps.enumerated() {
            let nominal = Duration.milliseconds(500) * (1 << index)
            #expect(sleep >= nominal / 2 && sleep <= nominal * 3 / 2)
        }
    }

    @Test func doesNotRetryA400() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 400, body: try fixtureText("invalidTransactionIdError"))
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.apiError == .invalidTransactionId)
        #expect(h.transport.requests.count == 1)
        #expect(h.clock.sleeps.isEmpty)
    }

    @Test func retriesAppleRetryableCodes() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 404, body: #"{"errorCode":4040006,"errorMessage":"try again"}"#)
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 200, body: "{}")
        _ = try await h.client.transactionInfo(transactionId: "1")
        try h.transport.verify()
    }

    @Test func honoursRetryAfterOn429() async throws {
        let h = try H()
        let retryAt = H.start.millisecondsSince1970 + 1_500
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(
                status: 429,
                headers: ["Retry-After": String(retryAt)],
                body: try fixtureText("apiTooManyRequestsException")
            )
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 200, body: try fixtureText("transactionInfoResponse"))
        _ = try await h.client.transactionInfo(transactionId: "1")
        #expect(h.clock.sleeps == [.milliseconds(1_500)])
        #expect(h.wall.now.millisecondsSince1970 == retryAt)
        try h.transport.verify()
    }

    @Test func retryAfterBeyondTheBudgetIsReturnedToTheCaller() async throws {
        let h = try H(options: H.options { $0.retryBudget = .seconds(10) })
        let retryAt = H.start.millisecondsSince1970 + 60_000
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(
                status: 429,
                headers: ["retry-after": String(retryAt)],
                body: try fixtureText("apiTooManyRequestsException")
            )
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.apiError == .rateLimitExceeded)
        #expect(error.httpStatus == 429)
        #expect(error.isRetryable)
        #expect(error.retryAfter == Date(millisecondsSince1970: retryAt))
        #expect(h.clock.sleeps.isEmpty)
        #expect(h.transport.requests.count == 1)
    }

    @Test func budgetStopsBackoff() async throws {
        let h = try H(options: H.options { $0.retryBudget = .seconds(1) })
        for _ in 0..<2 {
            h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 500)
        }
        _ = await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") }
        // 500 ms fits in the budget, the following 1 s does not.
        #expect(h.clock.sleeps == [.milliseconds(500)])
        try h.transport.verify()
    }

    @Test func postsAreNotRetriedUnlessOptedIn() async throws {
        let request = MassExtendRenewalDateRequest(
            extendByDays: 1,
            extendReasonCode: .other,
            requestIdentifier: "r",
            productId: "p"
        )
        let h = try H()
        h.transport.expect(method: "POST", path: "/inApps/v1/subscriptions/extend/mass").respond(status: 500)
        _ = await apiFailure { _ = try await h.client.extendRenewalDateForAllActiveSubscribers(request) }
        #expect(h.transport.requests.count == 1)
        let h2 = try H()
        h2.transport.expect(method: "POST", path: "/inApps/v1/notifications/test").respond(status: 503)
        _ = await apiFailure { _ = try await h2.client.requestTestNotification() }
        #expect(h2.transport.requests.count == 1)

        let optedIn = try H(options: H.options { $0.retriesNonIdempotentRequests = true })
        optedIn.transport.expect(method: "POST", path: "/inApps/v1/subscriptions/extend/mass").respond(status: 500)
        optedIn.transport.expect(method: "POST", path: "/inApps/v1/subscriptions/extend/mass")
            .respond(status: 200, body: #"{"requestIdentifier":"r"}"#)
        let response = try await optedIn.client.extendRenewalDateForAllActiveSubscribers(request)
        #expect(response.requestIdentifier == "r")
        try optedIn.transport.verify()
    }

    @Test func idempotentPutsAreRetried() async throws {
        let h = try H()
        h.transport.expect(method: "PUT", path: "/inApps/v2/transactions/consumption/1").respond(status: 500)
        h.transport.expect(
            method: "PUT",
            path: "/inApps/v2/transactions/consumption/1",
            body: .json(
                #"{"customerConsented":true,"sampleContentProvided":false}"#
            )
        ).respond(status: 202)
        try await h.client.sendConsumptionInformation(
            transactionId: "1",
            ConsumptionRequest(customerConsented: true, sampleContentProvided: false)
        )
        try h.transport.verify()
    }

    @Test func transportFailuresAndTimeoutsAreRetriedForReads() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .fail(with: IAPError(.timeout, "timed out"))
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .fail(with: IAPError(.transportFailure, "connection reset"))
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 200, body: "{}")
        _ = try await h.client.transactionInfo(transactionId: "1")
        #expect(h.clock.sleeps == [.milliseconds(500), .seconds(1)])
        try h.transport.verify()
    }

    @Test func cancellationIsNotRetried() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .fail(with: IAPError(.cancelled, "cancelled"))
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.code == .cancelled)
        #expect(h.transport.requests.count == 1)
    }

    @Test func a401GetsOneFreshToken() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1", headers: H.standardHeaders())
            .respond(status: 401)
        h.transport.expect(
            method: "GET",
            path: "/inApps/v1/transactions/1",
            headers: H.standardHeaders(token: "token-2")
        ).respond(status: 200, body: try fixtureText("transactionInfoResponse"))
        _ = try await h.client.transactionInfo(transactionId: "1")
        #expect(h.tokens.invalidations == 1)
        #expect(h.clock.sleeps.isEmpty)
        try h.transport.verify()
    }

    @Test func aSecond401IsThrown() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 401)
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 401)
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.code == .apiError)
        #expect(error.httpStatus == 401)
        #expect(error.isRetryable == false)
        #expect(error.message == "HTTP 401: the bearer token was rejected")
        #expect(h.tokens.invalidations == 1)
        try h.transport.verify()
    }

    @Test func a401OnAPostIsRetriedWithAFreshToken() async throws {
        let h = try H()
        h.transport.expect(method: "POST", path: "/inApps/v1/notifications/test").respond(status: 401)
        h.transport.expect(
            method: "POST",
            path: "/inApps/v1/notifications/test",
            headers: H.standardHeaders(token: "token-2")
        ).respond(status: 200, body: try fixtureText("requestTestNotificationResponse"))
        _ = try await h.client.requestTestNotification()
        try h.transport.verify()
    }

    @Test func productionFallsBackToSandboxWhenAsked() async throws {
        let h = try H(environment: .production, options: H.options { $0.fallsBackToSandbox = true })
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 404, body: try fixtureText("transactionIdNotFoundError"))
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 200, body: try fixtureText("transactionInfoResponse"))
        let response = try await h.client.transactionInfo(transactionId: "1")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
        #expect(
            h.transport.requests.map { $0.url.host } == ["api.storekit.apple.com", "api.storekit-sandbox.apple.com"]
        )
        try h.transport.verify()
    }

    @Test func fallbackAlsoCoversOriginalTransactionIdNotFound() async throws {
        let sandbox = try #require(URL(string: "http://127.0.0.1:9/sandbox"))
        let h = try H(
            environment: .production,
            options: H.options {
                $0.fallsBackToSandbox = true
                $0.sandboxFallbackBaseURL = sandbox
            }
        )
        h.transport.expect(method: "GET", path: "/inApps/v1/subscriptions/1")
            .respond(status: 404, body: #"{"errorCode":4040005,"errorMessage":"Original transaction id not found."}"#)
        h.transport.expect(method: "GET", path: "/sandbox/inApps/v1/subscriptions/1")
            .respond(status: 404, body: #"{"errorCode":4040005,"errorMessage":"Original transaction id not found."}"#)
        let error = try #require(
            await apiFailure { _ = try await h.client.allSubscriptionStatuses(anyTransactionId: "1") }
        )
        #expect(error.apiError == .originalTransactionIdNotFound)
        try h.transport.verify()
    }

    @Test func noFallbackWithoutTheOptionOrForOtherErrors() async throws {
        let h = try H(environment: .production)
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 404, body: try fixtureText("transactionIdNotFoundError"))
        _ = await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") }
        #expect(h.transport.requests.count == 1)

        let h2 = try H(environment: .production, options: H.options { $0.fallsBackToSandbox = true })
        h2.transport.expect(method: "GET", path: "/inApps/v1/transactions/1")
            .respond(status: 400, body: try fixtureText("invalidTransactionIdError"))
        _ = await apiFailure { _ = try await h2.client.transactionInfo(transactionId: "1") }
        #expect(h2.transport.requests.count == 1)
    }

    @Test func malformedAppAppleIdIsADecodingFailure() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/1")
            .respond(status: 200, body: try fixtureText("transactionHistoryResponseWithMalformedAppAppleId"))
        let error = try #require(
            await apiFailure { _ = try await h.client.transactionHistoryPage(anyTransactionId: "1") }
        )
        #expect(error.code == .decodingFailure)
        #expect(error.message.contains("hasMore") || error.message.contains("appAppleId"))
        #expect(error.underlying != nil)
        #expect(h.transport.requests.count == 1)
    }

    @Test func wrongTypeNamesTheFieldPath() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/subscriptions/1")
            .respond(status: 200, body: #"{"data":[{"lastTransactions":[{"status":"active"}]}]}"#)
        let error = try #require(
            await apiFailure { _ = try await h.client.allSubscriptionStatuses(anyTransactionId: "1") }
        )
        #expect(error.code == .decodingFailure)
        #expect(error.message.contains("data[0].lastTransactions[0].status"))
    }

    @Test func malformedJSONIsADecodingFailure() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 200, body: "{")
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.code == .decodingFailure)
        #expect(h.transport.requests.count == 1)
    }

    @Test func unknownEnvironmentStillDecodes() async throws {
        let h = try H()
        h.transport.expect(method: "GET", path: "/inApps/v2/history/1")
            .respond(status: 200, body: try fixtureText("transactionHistoryResponseWithMalformedEnvironment"))
        let page = try await h.client.transactionHistoryPage(anyTransactionId: "1")
        #expect(page.environment == AppStoreEnvironment(rawValue: "LocalTestingxxx"))
        #expect(page.environment?.isKnown == false)
    }

    @Test func oversizedBodyIsRefused() async throws {
        let h = try H(options: H.options { $0.maximumResponseSize = 64 })
        let big = #"{"signedTransactionInfo":""# + String(repeating: "a", count: 100) + #""}"#
        h.transport.expect(method: "GET", path: "/inApps/v1/transactions/1").respond(status: 200, body: big)
        let error = try #require(await apiFailure { _ = try await h.client.transactionInfo(transactionId: "1") })
        #expect(error.code == .decodingFailure)
        #expect(error.message.contains("more than the 64"))
        #expect(h.transport.requests.count == 1)
    }

    @Test func tokenProviderFailureIsReported() async throws {
        struct FailingTokens: BearerTokenProvider {
            func token() async throws -> String { throw IAPError(.invalidKey, "no key") }
            func invalidate() async {}
        }
        let client = try AppStoreServerAPIClient(
            environment: .sandbox,
            transport: ScriptedTransport(),
            tokenProvider: FailingTokens()
        )
        let error = try #require(await apiFailure { _ = try await client.transactionInfo(transactionId: "1") })
        #expect(error.code == .invalidKey)
    }
}
