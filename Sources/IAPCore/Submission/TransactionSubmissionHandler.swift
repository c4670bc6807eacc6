#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The answer to `POST /iap/v1/transactions`: an HTTP status and a JSON body.
public struct TransactionSubmissionResponse: Sendable, Hashable {
    /// `200` settled (finish the transaction), `202` pending or deferred (submit again later), `400` a malformed
    /// body or signed data, `403` a user other than the authenticated one, `409` another user's purchase, `422`
    /// any other rejection, `503` a failure that may pass.
    public var status: Int
    /// The JSON body (``TransactionSubmissionResult`` encoded).
    public var body: Data
    /// The answer as a value.
    public var result: TransactionSubmissionResult

    /// The content type of ``body``.
    public static let contentType = "application/json"

    /// Creates a response for a result, with the result's own status unless another is given.
    ///
    /// - Parameters:
    ///   - result: The answer.
    ///   - status: The HTTP status; ``TransactionSubmissionResult/httpStatus`` by default.
    public init(result: TransactionSubmissionResult, status: Int? = nil) {
        self.result = result
        self.status = status ?? result.httpStatus
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.body = (try? encoder.encode(result)) ?? Data(#"{"finish":false,"outcome":"rejected"}"#.utf8)
    }
}

/// The server half of IAPApp's `HTTPDeliveryClient`, framework-agnostic: hand it the body of
/// `POST /iap/v1/transactions`, send back its ``TransactionSubmissionResponse``.
///
/// The body is `{"signedTransaction": "...", "userId": "...", "orderId": "..."}` (`userId` and `orderId` may be
/// left out or `null`). The transaction goes through the ``DeliveryPipeline``: verified, recorded once, granted
/// once. The answer says whether the app may finish its StoreKit transaction (`"finish": true`, status `200`).
///
/// ```swift
/// // In any HTTP framework's route for POST /iap/v1/transactions:
/// let response = await handler.handle(body: requestBody, authenticatedUserId: signedIn.userId)
/// return Response(status: response.status, contentType: TransactionSubmissionResponse.contentType, body: response.body)
/// ```
public final class TransactionSubmissionHandler: Sendable {
    private let pipeline: DeliveryPipeline

    /// The largest body accepted; a signed transaction is a few kilobytes.
    public static let maximumBodySize = 64 * 1024
    /// The longest user or order id accepted.
    public static let maximumIdLength = 256

    /// Creates a handler.
    ///
    /// - Parameter pipeline: The pipeline that delivers.
    public init(pipeline: DeliveryPipeline) {
        self.pipeline = pipeline
    }

    private struct Body: Decodable {
        var signedTransaction: String
        var userId: String?
        var orderId: String?
    }

    /// Handles the body of a submission.
    ///
    /// - Parameters:
    ///   - body: The raw request body.
    ///   - authenticatedUserId: The user the server authenticated the request as, if it does: the body's
    ///     `userId` must then be absent or equal, and the purchase goes to this user. Servers should pass it;
    ///     without it the body's `userId` is taken at its word.
    /// - Returns: The status and JSON body to answer with.
    public func handle(body: Data, authenticatedUserId: String? = nil) async -> TransactionSubmissionResponse {
        guard body.count <= Self.maximumBodySize else {
            return Self.malformed("the body is \(body.count) bytes, more than \(Self.maximumBodySize)")
        }
        let request: Body
        do {
            request = try JSONDecoder().decode(Body.self, from: body)
        } catch {
            return Self.malformed(
                #"the body is not {"signedTransaction": "...", "userId": "...", "orderId": "..."}"#
            )
        }
        guard !request.signedTransaction.isEmpty else {
            return Self.malformed("signedTransaction is empty")
        }
        for (name, value) in [("userId", request.userId), ("orderId", request.orderId)] {
            guard let value else { continue }
            guard !value.isEmpty, value.count <= Self.maximumIdLength else {
                return Self.malformed("\(name) must be 1 to \(Self.maximumIdLength) characters")
            }
        }
        var userId = request.userId
        if let authenticatedUserId {
            if let claimed = request.userId, claimed != authenticatedUserId {
                let error = IAPError(
                    .ownershipConflict,
                    "the request is authenticated as another user than '\(claimed)'"
                )
                return TransactionSubmissionResponse(
                    result: TransactionSubmissionResult(outcome: .rejected, transactionId: nil, error: error),
                    status: 403
                )
            }
            userId = authenticatedUserId
        }
        let outcome = await pipeline.submit(
            signedTransaction: request.signedTransaction,
            userId: userId,
            orderId: request.orderId
        )
        return TransactionSubmissionResponse(result: TransactionSubmissionResult(outcome))
    }

    private static func malformed(_ message: String) -> TransactionSubmissionResponse {
        TransactionSubmissionResponse(
            result: TransactionSubmissionResult(
                outcome: .rejected,
                transactionId: nil,
                error: IAPError(.malformedRequest, message)
            )
        )
    }
}
