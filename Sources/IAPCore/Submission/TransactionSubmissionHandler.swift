#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The answer to `POST /iap/v1/transactions`: an HTTP status and a JSON body.
public struct TransactionSubmissionResponse: Sendable, Hashable {
    /// `200` settled (finish the transaction), `202` pending, awaiting its owner or deferred (submit again later),
    /// `400` a malformed body or signed data, `401` no authenticated user, `403` a user other than the authenticated
    /// one, `409` another user's purchase, `422` any other rejection, `503` a failure that may pass.
    public var status: Int
    /// The JSON body (``TransactionSubmissionResult`` encoded): a code and a neutral message, never the detail.
    public var body: Data
    /// The answer as a value, as the client reads it.
    public var result: TransactionSubmissionResult
    /// The error with the operator's detail (other users, internal state, storage errors), for the server's logs.
    /// Never send it to the client: ``body`` carries its code with a neutral message.
    public var detail: IAPError?

    /// The content type of ``body``.
    public static let contentType = "application/json"

    /// Creates a response for a result, with the result's own status unless another is given.
    ///
    /// - Parameters:
    ///   - result: The answer, as the client may read it.
    ///   - status: The HTTP status; ``TransactionSubmissionResult/httpStatus`` by default.
    ///   - detail: The error with the operator's detail, kept out of the body.
    public init(result: TransactionSubmissionResult, status: Int? = nil, detail: IAPError? = nil) {
        self.result = result
        self.status = status ?? result.httpStatus
        self.detail = detail
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.body = (try? encoder.encode(result)) ?? Data(#"{"finish":false,"outcome":"rejected"}"#.utf8)
    }
}

/// The server half of IAPApp's `HTTPDeliveryClient`, framework-agnostic: hand it the body of
/// `POST /iap/v1/transactions` and the user the request is authenticated as, send back its
/// ``TransactionSubmissionResponse``.
///
/// The body is `{"signedTransaction": "...", "userId": "...", "orderId": "...", "signedAppTransaction": "..."}`
/// (`userId`, `orderId` and `signedAppTransaction` may be left out or `null`). A signed app transaction (StoreKit's
/// `AppTransaction.shared`, which `PurchaseCoordinator` sends) is verified and its `appTransactionId` recorded against
/// the user in an event (`submission.appTransaction`: `matched`, `mismatch` or `rejected`); it never decides the
/// purchase's fate. The purchase goes to the authenticated user: a body `userId` that differs is refused `403`,
/// and a request without an authenticated user `401`, unless the handler was made with the named opt-out
/// ``Authentication/trustBodyUserId``. The transaction then goes through the ``DeliveryPipeline``: verified, its
/// owner checked, recorded once, granted once. The answer says whether the app may finish its StoreKit transaction
/// (`"finish": true`, status `200`).
///
/// What goes back to the client is a code and a neutral message: never another user's id, never the store's or the
/// hook's errors. The detail goes to the operator, in ``TransactionSubmissionResponse/detail`` and in one
/// ``IAPEvent`` per request (`submission.delivered`, `submission.rejected`, ...) to the pipeline's ``EventSink``.
///
/// ```swift
/// // In any HTTP framework's route for POST /iap/v1/transactions:
/// let response = await handler.handle(body: requestBody, authenticatedUserId: signedIn.userId)
/// return Response(status: response.status, contentType: TransactionSubmissionResponse.contentType, body: response.body)
/// ```
public final class TransactionSubmissionHandler: Sendable {
    /// Who a submitted purchase goes to.
    public enum Authentication: String, Sendable, Hashable {
        /// The user the server authenticated the request as; a request without one is refused `401`. The default.
        case required
        /// The body's `userId`, taken at its word, for a server that truly authenticates nobody. Anyone who holds a
        /// signed transaction (it sits in the app's outbox, logs and support tickets) can then claim an unclaimed
        /// purchase for any user id: pair it with a ``TokenOwnershipCheck`` or bound tokens.
        case trustBodyUserId
    }

    private let pipeline: DeliveryPipeline
    /// Who a submitted purchase goes to.
    public let authentication: Authentication

    /// The largest body accepted; a signed transaction is a few kilobytes.
    public static let maximumBodySize = 64 * 1024
    /// The longest user or order id accepted.
    public static let maximumIdLength = 256

    /// Creates a handler.
    ///
    /// - Parameters:
    ///   - pipeline: The pipeline that delivers; its ``EventSink`` receives the handler's events.
    ///   - authentication: Who a purchase goes to: ``Authentication/required`` (the default), or the named opt-out
    ///     ``Authentication/trustBodyUserId``.
    public init(pipeline: DeliveryPipeline, authentication: Authentication = .required) {
        self.pipeline = pipeline
        self.authentication = authentication
    }

    private struct Body: Decodable {
        var signedTransaction: String
        var userId: String?
        var orderId: String?
        var signedAppTransaction: String?
    }

    /// Handles the body of a submission.
    ///
    /// - Parameters:
    ///   - body: The raw request body.
    ///   - authenticatedUserId: The user the server authenticated the request as: the body's `userId` must be
    ///     absent or equal, and the purchase goes to this user. `nil` only for a handler made with
    ///     ``Authentication/trustBodyUserId``; otherwise the request is refused `401`.
    /// - Returns: The status and JSON body to answer with.
    public func handle(body: Data, authenticatedUserId: String?) async -> TransactionSubmissionResponse {
        let request: Body
        switch Self.decode(body) {
        case .success(let decoded):
            request = decoded
        case .failure(let refusal):
            return answer(refusal, userId: authenticatedUserId)
        }
        let userId: String?
        switch owner(of: request, authenticatedUserId: authenticatedUserId) {
        case .success(let owner):
            userId = owner
        case .failure(let refusal):
            return answer(refusal, userId: authenticatedUserId)
        }
        let outcome = await pipeline.submit(
            signedTransaction: request.signedTransaction,
            userId: userId,
            orderId: request.orderId
        )
        if let signedAppTransaction = request.signedAppTransaction, let userId {
            await recordAppTransaction(signedAppTransaction, userId: userId, entry: outcome.entry)
        }
        var result = TransactionSubmissionResult(outcome)
        result.error = result.error.map(Self.neutral)
        let detail: IAPError? =
            switch outcome {
            case .deferred(_, let error), .rejected(let error): error
            default: nil
            }
        let response = TransactionSubmissionResponse(result: result, detail: detail)
        report(response, userId: userId, entry: outcome.entry)
        return response
    }

    // MARK: - Steps

    /// A request refused before the pipeline: what the client reads, and the operator's detail.
    private struct Refusal: Error {
        var client: IAPError
        var detail: IAPError
    }

    private static func decode(_ body: Data) -> Result<Body, Refusal> {
        func malformed(_ message: String) -> Result<Body, Refusal> {
            let error = IAPError(.malformedRequest, message)
            return .failure(Refusal(client: error, detail: error))
        }
        guard body.count <= maximumBodySize else {
            return malformed("the body is larger than \(maximumBodySize) bytes")
        }
        let request: Body
        do {
            request = try JSONDecoder().decode(Body.self, from: body)
        } catch {
            return malformed(#"the body is not {"signedTransaction": "...", "userId": "...", "orderId": "..."}"#)
        }
        guard !JSONMemberNames.hasDuplicate([UInt8](body)) else {
            return malformed("the body names a member twice")
        }
        guard !request.signedTransaction.isEmpty else {
            return malformed("signedTransaction is empty")
        }
        for (name, value) in [("userId", request.userId), ("orderId", request.orderId)] {
            guard let value else { continue }
            guard !value.isEmpty, value.count <= maximumIdLength else {
                return malformed("\(name) must be 1 to \(maximumIdLength) characters")
            }
        }
        if let userId = request.userId, userId.hasPrefix(DeliveryPipeline.unownedPrefix) {
            return .failure(
                Refusal(
                    client: IAPError(.malformedRequest, "userId is not a valid user id"),
                    detail: IAPError(.malformedRequest, "the body's userId '\(userId)' is in the reserved namespace")
                )
            )
        }
        return .success(request)
    }

    /// The user the purchase goes to: the authenticated one, the body's under ``Authentication/trustBodyUserId``.
    private func owner(of request: Body, authenticatedUserId: String?) -> Result<String?, Refusal> {
        guard let authenticated = authenticatedUserId else {
            guard authentication == .trustBodyUserId else {
                return .failure(
                    Refusal(
                        client: IAPError(.unauthenticated, "the request is not authenticated"),
                        detail: IAPError(
                            .unauthenticated,
                            "no authenticated user was passed to a handler that requires one; authenticate the "
                                + "route, or make the handler with authentication: .trustBodyUserId"
                        )
                    )
                )
            }
            return .success(request.userId)
        }
        do {
            try DeliveryPipeline.validate(userId: authenticated)
        } catch {
            let detail = IAPError.wrapping(error, as: .invalidArgument, "the authenticated user id is not valid")
            return .failure(
                Refusal(client: IAPError(.unauthenticated, "the request is not authenticated"), detail: detail)
            )
        }
        if let claimed = request.userId, !claimed.isSameUser(as: authenticated) {
            return .failure(
                Refusal(
                    client: IAPError(.userMismatch, "the request names a user other than the authenticated one"),
                    detail: IAPError(
                        .userMismatch,
                        "the body names user '\(claimed)' but the request is authenticated as '\(authenticated)'"
                    )
                )
            )
        }
        return .success(authenticated)
    }

    private func answer(_ refusal: Refusal, userId: String?) -> TransactionSubmissionResponse {
        let response = TransactionSubmissionResponse(
            result: TransactionSubmissionResult(outcome: .rejected, transactionId: nil, error: refusal.client),
            detail: refusal.detail
        )
        report(response, userId: userId, entry: nil)
        return response
    }

    /// Verifies the app transaction a submission carries and records its `appTransactionId` (the Apple Account)
    /// against the user, in the event `submission.appTransaction`: outcome `matched` when the purchase was made by that
    /// account too (or does not say), `mismatch` when it names another account (a shared device, an Apple Account
    /// switch: worth a look, the purchase is delivered all the same), `rejected` when it does not verify (the purchase
    /// is delivered all the same; the app transaction is optional).
    private func recordAppTransaction(_ signed: String, userId: String, entry: LedgerEntry?) async {
        var event = IAPEvent(
            time: pipeline.clock.now,
            event: "submission.appTransaction",
            userId: userId,
            productId: entry?.productId,
            transactionId: entry?.transactionId,
            originalTransactionId: entry?.originalTransactionId,
            environment: entry?.environment?.rawValue
        )
        do {
            let appTransaction = try await pipeline.verifier.verifyAppTransaction(signed)
            let account = appTransaction.appTransactionId
            let purchaser = entry?.transaction.appTransactionId
            event.outcome = purchaser == nil || account == nil || purchaser == account ? "matched" : "mismatch"
            event.message =
                "appTransactionId \(account ?? "none")"
                + (event.outcome == "mismatch" ? "; the purchase names appTransactionId \(purchaser ?? "")" : "")
        } catch {
            let failure = IAPError.wrapping(error, as: .malformedSignedData, "the app transaction does not verify")
            event.outcome = "rejected"
            event.errorCode = failure.code.rawValue
            event.message = failure.message
        }
        pipeline.events.record(event)
    }

    /// One event per request, with the operator's detail.
    private func report(_ response: TransactionSubmissionResponse, userId: String?, entry: LedgerEntry?) {
        pipeline.events.record(
            IAPEvent(
                time: pipeline.clock.now,
                event: "submission.\(response.result.outcome.rawValue)",
                userId: userId,
                productId: entry?.productId,
                transactionId: entry?.transactionId ?? response.result.transactionId,
                originalTransactionId: entry?.originalTransactionId,
                environment: entry?.environment?.rawValue,
                outcome: response.result.outcome.rawValue,
                errorCode: response.detail?.code.rawValue,
                message: response.detail?.message
            )
        )
    }

    /// The error as the client may read it: its code and whether to retry, with a message that names nobody and
    /// tells nothing of the server's inside.
    static func neutral(_ error: IAPError) -> IAPError {
        IAPError(error.code, neutralMessage(for: error), isRetryable: error.isRetryable)
    }

    private static func neutralMessage(for error: IAPError) -> String {
        switch error.code {
        case .ownershipConflict:
            return "the purchase cannot be delivered to this user"
        case .sandboxPurchaseRefused:
            return "purchases from this environment are not accepted"
        case .environmentMismatch:
            return "the signed transaction is not from an accepted environment"
        case .bundleIdMismatch, .appAppleIdMismatch:
            return "the signed transaction is for another app"
        case .unknownProduct:
            // Parked, not refused: the purchase is kept and granted once the catalog names its product.
            return "the purchase is recorded; it is delivered once the server knows its product: submit it again later"
        case .malformedSignedData, .unexpectedPayload:
            return "the signed transaction is malformed"
        case .unsupportedAlgorithm, .certificateInvalid, .certificateChainInvalid, .untrustedRoot, .certificateExpired,
            .missingAppleMarker, .signatureInvalid, .unsignedEnvironmentRejected:
            return "the signed transaction did not verify"
        case .invalidArgument:
            return "the submission is not valid"
        case .fulfillmentFailed:
            return "the purchase is recorded; its delivery is retried: submit it again later"
        case .fulfillmentRefused:
            return "the purchase is recorded; its delivery waits for the seller to look at it"
        default:
            return error.isRetryable
                ? "the purchase cannot be taken now: submit it again later" : "the purchase was not accepted"
        }
    }
}
