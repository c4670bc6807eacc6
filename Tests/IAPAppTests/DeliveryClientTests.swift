import Foundation
import IAPApp
import IAPCore
import IAPInMemory
import IAPTesting
import Testing

/// The app's half of `POST /iap/v1/transactions`: what it sends, and how each answer maps back to an outcome.
@Suite("HTTP delivery client")
struct DeliveryClientTests {
    static let base = URL(string: "https://api.example.com/shop/")!
    static let submission = TransactionSubmission(signedTransaction: "a.b.c", userId: "user-42", orderId: "order-7")

    func submit(status: Int, body: String) async throws -> TransactionSubmissionResult {
        let transport = ScriptedTransport()
        transport.expect(
            method: "POST",
            path: "/shop/iap/v1/transactions",
            headers: ["Authorization": "Bearer token", "Content-Type": "application/json"],
            body: .json(#"{"signedTransaction":"a.b.c","userId":"user-42","orderId":"order-7"}"#)
        ).respond(status: status, body: body)
        let client = HTTPDeliveryClient(
            baseURL: Self.base,
            transport: transport,
            headers: ["Authorization": "Bearer token"]
        )
        let result = try await client.submit(Self.submission)
        try transport.verify()
        return result
    }

    @Test("plain http is refused before anything is sent, except to a loopback host")
    func plainHTTPIsRefusedExceptOnLoopback() async throws {
        for base in [
            "http://api.example.com", "http://10.0.0.5:8080", "ftp://api.example.com", "HTTP://example.org",
            "http://127.example.com", "http://127.0.0.1.example.com",
        ] {
            let transport = ScriptedTransport()
            let client = HTTPDeliveryClient(baseURL: URL(string: base)!, transport: transport)
            await #expect(throws: IAPError.self, "\(base)") { try await client.submit(Self.submission) }
            do {
                _ = try await client.submit(Self.submission)
            } catch let error as IAPError {
                #expect(error.code == .invalidConfiguration && error.message.contains("not https"), "\(error)")
            }
            #expect(transport.requests.isEmpty, "\(base)")
        }
        for base in ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://api.example.com"] {
            let transport = ScriptedTransport()
            transport.expect(method: "POST", path: "/iap/v1/transactions").respond(
                status: 200,
                body: #"{"outcome":"delivered","transactionId":"2000000000000001","finish":true}"#
            )
            let client = HTTPDeliveryClient(baseURL: URL(string: base)!, transport: transport)
            #expect(try await client.submit(Self.submission).finish, "\(base)")
        }
    }

    @Test("200 with a delivered answer: finish")
    func delivered() async throws {
        let result = try await submit(
            status: 200,
            body: #"{"outcome":"delivered","transactionId":"2000000000000001","finish":true}"#
        )
        #expect(result.outcome == .delivered)
        #expect(result.transactionId == "2000000000000001")
        #expect(result.finish)
    }

    @Test("202 pending: do not finish, submit again")
    func pending() async throws {
        let result = try await submit(status: 202, body: #"{"outcome":"pending","finish":false}"#)
        #expect(result.outcome == .pending)
        #expect(!result.finish)
        #expect(result.isRetryable)
    }

    @Test("a 202 that claims to be settled is not taken as settled")
    func acceptedIsNeverSettled() async throws {
        let result = try await submit(status: 202, body: #"{"outcome":"delivered","finish":true}"#)
        #expect(!result.finish)
    }

    @Test("a settled outcome is taken as settled only from a 200 that says finish true")
    func settledNeedsFinishAnd200() async throws {
        let answers: [(Int, String)] = [
            (200, #"{"outcome":"delivered","transactionId":"7","finish":false}"#),
            (200, #"{"outcome":"alreadyDelivered","transactionId":"7"}"#),
            (201, #"{"outcome":"delivered","transactionId":"7","finish":true}"#),
            (203, #"{"outcome":"revoked","transactionId":"7","finish":true}"#),
        ]
        for (status, body) in answers {
            let result = try await submit(status: status, body: body)
            #expect(!result.finish, "\(status) \(body)")
            #expect(result.isRetryable, "\(status) \(body)")
        }
    }

    @Test("a 4xx rejection keeps the server's error code and is not retryable")
    func rejected() async throws {
        let result = try await submit(
            status: 422,
            body:
                #"{"outcome":"rejected","finish":false,"error":{"code":"bundleIdMismatch","message":"other app","retryable":false}}"#
        )
        #expect(result.outcome == .rejected)
        #expect(result.error?.code == .bundleIdMismatch)
        #expect(result.error?.httpStatus == 422)
        #expect(!result.isRetryable)
        #expect(!result.finish)
    }

    @Test("503 is a rejection that may pass, whatever its body")
    func unavailable() async throws {
        let result = try await submit(status: 503, body: "<html>maintenance</html>")
        #expect(result.outcome == .rejected)
        #expect(result.isRetryable)
        #expect(!result.finish)
    }

    @Test("401 and 403 mean the customer must sign in again: kept and submitted again, not a final rejection")
    func authenticationRequired() async throws {
        for status in [401, 403] {
            let result = try await submit(status: status, body: #"{"error":"session expired"}"#)
            #expect(result.outcome == .rejected)
            #expect(result.error?.code == .authenticationRequired)
            #expect(result.error?.httpStatus == status)
            #expect(result.isRetryable)
            #expect(!result.finish)
            #expect(PurchaseFailureKind.classify(try #require(result.error)) == .authenticationRequired)
        }
    }

    @Test("the header provider is called for each request; when it fails, nothing is sent")
    func headerProvider() async throws {
        let calls = LockedValue(0)
        let transport = ScriptedTransport()
        for token in ["t1", "t2"] {
            transport.expect(
                method: "POST",
                path: "/iap/v1/transactions",
                headers: ["Authorization": "Bearer \(token)"]
            ).respond(status: 200, body: #"{"outcome":"delivered","transactionId":"7","finish":true}"#)
        }
        let client = HTTPDeliveryClient(baseURL: URL(string: "https://api.example.com")!, transport: transport) {
            let call = calls.withLock { count in
                count += 1
                return count
            }
            guard call <= 2 else { throw IAPError(.notFound, "no session") }
            return ["Authorization": "Bearer t\(call)"]
        }
        #expect(try await client.submit(Self.submission).finish)
        #expect(try await client.submit(Self.submission).finish)
        let error = await #expect(throws: IAPError(.authenticationRequired)) {
            try await client.submit(Self.submission)
        }
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("no session") == true)
        try transport.verify()
        #expect(calls.withLock { $0 } == 3)
    }

    @Test("a 404 without a result points at the configuration")
    func wrongEndpoint() async throws {
        let result = try await submit(status: 404, body: "Not Found")
        #expect(result.error?.code == .invalidConfiguration)
        #expect(PurchaseFailureKind.classify(try #require(result.error)) == .configuration)
    }

    @Test("a 200 whose body is not a result (a captive portal) is never taken for a delivery")
    func unreadableSuccess() async throws {
        let result = try await submit(status: 200, body: "<html>Sign in to the Wi-Fi</html>")
        #expect(!result.finish)
        #expect(result.error?.code == .decodingFailure)
        #expect(result.isRetryable)
    }

    @Test("no answer at all throws a retryable error")
    func unreachable() async throws {
        let transport = ScriptedTransport()
        transport.expect(method: "POST", path: "/iap/v1/transactions")
            .fail(with: IAPError(.transportFailure, "connection refused"))
        let client = HTTPDeliveryClient(baseURL: URL(string: "https://api.example.com")!, transport: transport)
        let error = await #expect(throws: IAPError(.transportFailure)) { try await client.submit(Self.submission) }
        #expect(error?.isRetryable == true)
    }

    @Test("the answer's JSON is exactly the documented contract")
    func resultJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let delivered = TransactionSubmissionResult(outcome: .delivered, transactionId: "7")
        #expect(
            String(decoding: try encoder.encode(delivered), as: UTF8.self)
                == #"{"finish":true,"outcome":"delivered","transactionId":"7"}"#
        )
        let rejected = TransactionSubmissionResult(
            outcome: .rejected,
            transactionId: nil,
            error: IAPError(.storageFailure, "down", isRetryable: true)
        )
        #expect(rejected.httpStatus == 503)
        let decoded = try JSONDecoder().decode(TransactionSubmissionResult.self, from: encoder.encode(rejected))
        #expect(decoded.error?.code == .storageFailure)
        #expect(decoded.error?.isRetryable == true)
        #expect(TransactionSubmissionResult(outcome: .revoked, transactionId: "7").httpStatus == 200)
        #expect(TransactionSubmissionResult(outcome: .deferred, transactionId: "7").httpStatus == 202)
    }

    @Test("failures are classified for the interface")
    func classification() {
        #expect(PurchaseFailureKind.classify(IAPError(.userCancelled)) == .userCancelled)
        #expect(PurchaseFailureKind.classify(IAPError(.transportFailure)) == .retryable)
        #expect(PurchaseFailureKind.classify(IAPError(.storageFailure, isRetryable: true)) == .retryable)
        #expect(PurchaseFailureKind.classify(IAPError(.unknownProduct)) == .configuration)
        #expect(PurchaseFailureKind.classify(IAPError(.purchaseNotAllowed)) == .configuration)
        #expect(PurchaseFailureKind.classify(IAPError(.signatureInvalid)) == .verification)
        #expect(PurchaseFailureKind.classify(IAPError(.ownershipConflict)) == .unknown)
        #expect(PurchaseFailureKind.classify(IAPError(.authenticationRequired)) == .authenticationRequired)
        #expect(PurchaseFailureKind.classify(IAPError(.unauthenticated)) == .authenticationRequired)
        #expect(PurchaseFailureKind.classify(IAPError(.userMismatch)) == .authenticationRequired)
        #expect(PurchaseFailureKind.classify(IAPError(.refundAlreadyRequested)) == .alreadyRequested)
        #expect(PurchaseFailureKind.classify(IAPError(.refundRequestFailed, isRetryable: true)) == .retryable)
        #expect(PurchaseFailureKind.classify(IAPError(.offerInvalid)) == .configuration)
        #expect(PurchaseFailureKind.classify(IAPError(.offerIneligible)) == .configuration)
        #expect(PurchaseFailureKind.classify(IAPError(.unsupportedOperation)) == .configuration)
    }

    @Test("a signed transaction's claims are read for routing; anything else is malformedSignedData")
    func unverifiedClaims() throws {
        let payload =
            #"{"transactionId":"2000000000000009","productId":"coins","appAccountToken":"6F1B7C7E-3F52-4A8E-9A1E-0C2D9F6B5A10","purchaseDate":1767225600000}"#
        let segment = Base64.encodeURL(payload.utf8)
        let claims = try UnverifiedTransaction(signedTransaction: "eyJhbGciOiJFUzI1NiJ9.\(segment).c2ln")
        #expect(claims.transactionId == "2000000000000009")
        #expect(claims.productId == "coins")
        #expect(claims.appAccountToken == "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10")
        for bad in ["", "a.b", "a.%%%.c", "a.\(Data("[]".utf8).base64EncodedString()).c", "a.e30.c"] {
            #expect(throws: IAPError(.malformedSignedData)) { try UnverifiedTransaction(signedTransaction: bad) }
        }
    }
}
