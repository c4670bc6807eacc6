#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import IAPCore

/// The machinery of the deprecated ``VerifyReceiptClient``: one `verifyReceipt` call, with Apple's redirect
/// between production and sandbox.
///
/// It is `package` and not deprecated so that the package's tests exercise it without deprecation warnings; the
/// public, deprecated surface is ``VerifyReceiptClient``, a thin wrapper.
package struct VerifyReceiptEngine: Sendable {
    /// Where a request goes.
    package enum Endpoint: String, Sendable {
        case production = "Production"
        case sandbox = "Sandbox"
    }

    /// The endpoint tried first.
    package let first: Endpoint
    /// The shared secret (`password`), needed for auto-renewable subscriptions.
    package let sharedSecret: String?
    /// The production URL.
    package let productionURL: URL
    /// The sandbox URL.
    package let sandboxURL: URL
    /// How long one HTTP exchange may take.
    package let requestTimeout: Duration
    /// What sends the requests.
    package let transport: any Transport

    /// Creates an engine.
    package init(
        first: Endpoint,
        sharedSecret: String?,
        productionURL: URL,
        sandboxURL: URL,
        requestTimeout: Duration,
        transport: any Transport
    ) {
        self.first = first
        self.sharedSecret = sharedSecret
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.requestTimeout = requestTimeout
        self.transport = transport
    }

    private struct RequestBody: Encodable {
        let receiptData: String
        let password: String?
        let excludeOldTransactions: Bool

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data"
            case password
            case excludeOldTransactions = "exclude-old-transactions"
        }
    }

    /// Sends a receipt to `verifyReceipt`, and once more to the other environment when Apple answers 21007
    /// (a sandbox receipt sent to production) or 21008 (a production receipt sent to the sandbox).
    ///
    /// - Parameters:
    ///   - receiptData: The base64-encoded receipt.
    ///   - excludeOldTransactions: Whether `latest_receipt_info` holds only the latest renewal of each
    ///     subscription.
    /// - Returns: The answer, with status 0 or 21006.
    /// - Throws: ``IAPError``: `apiError` for another status (``IAPError/apiErrorCode`` is the status,
    ///   ``IAPError/isRetryable`` says whether a retry can help) or a non-2xx HTTP answer, `decodingFailure` for an
    ///   answer that is not JSON with a status, or the transport's error.
    package func verify(receiptData: String, excludeOldTransactions: Bool) async throws -> VerifyReceiptResponse {
        guard !receiptData.isEmpty else {
            throw IAPError(.invalidArgument, "the receipt data is empty")
        }
        let body: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            body = try encoder.encode(
                RequestBody(
                    receiptData: receiptData,
                    password: sharedSecret,
                    excludeOldTransactions: excludeOldTransactions
                )
            )
        } catch {
            throw IAPError.wrapping(error, as: .invalidArgument, "the verifyReceipt request cannot be encoded")
        }
        let answer = try await send(body, to: first)
        let redirect: Endpoint?
        switch (first, VerifyReceiptStatus(rawValue: answer.status)) {
        case (.production, .sandboxReceiptSentToProduction): redirect = .sandbox
        case (.sandbox, .productionReceiptSentToSandbox): redirect = .production
        default: redirect = nil
        }
        guard let redirect else {
            return try check(answer, from: first)
        }
        return try check(try await send(body, to: redirect), from: redirect)
    }

    /// Throws for a status that is not a valid receipt.
    private func check(_ answer: VerifyReceiptResponse, from endpoint: Endpoint) throws -> VerifyReceiptResponse {
        let status = VerifyReceiptStatus(rawValue: answer.status)
        guard !status.carriesReceipt else {
            return answer
        }
        let retryable = status.isRetryable || answer.isRetryable == true
        var error = IAPError(
            .apiError,
            "verifyReceipt (\(endpoint.rawValue)) status \(status.rawValue): \(status.summary)",
            isRetryable: retryable
        )
        error.httpStatus = 200
        error.apiErrorCode = Int64(status.rawValue)
        throw error
    }

    /// Posts the body to one endpoint and decodes the answer.
    private func send(_ body: Data, to endpoint: Endpoint) async throws -> VerifyReceiptResponse {
        let request = HTTPRequest(
            method: "POST",
            url: endpoint == .production ? productionURL : sandboxURL,
            headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: body,
            timeout: requestTimeout
        )
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch is CancellationError {
            throw IAPError(.cancelled, "verifyReceipt (\(endpoint.rawValue)) was cancelled")
        } catch {
            throw IAPError.wrapping(error, as: .transportFailure, "verifyReceipt (\(endpoint.rawValue)) failed")
        }
        guard (200...299).contains(response.status) else {
            var error = IAPError(
                .apiError,
                "verifyReceipt (\(endpoint.rawValue)) answered HTTP \(response.status)",
                isRetryable: response.status == 429 || (500...599).contains(response.status)
            )
            error.httpStatus = response.status
            throw error
        }
        do {
            return try JSONDecoder().decode(VerifyReceiptResponse.self, from: response.body)
        } catch {
            var failure = IAPError(
                .decodingFailure,
                "the verifyReceipt (\(endpoint.rawValue)) answer is not valid: "
                    + DecodingError.summary(of: error),
                underlying: SendableErrorBox(error)
            )
            failure.httpStatus = response.status
            throw failure
        }
    }
}
