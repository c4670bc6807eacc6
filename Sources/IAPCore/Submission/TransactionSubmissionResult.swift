#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The server's answer to a submitted transaction: the ``DeliveryPipeline``'s outcome, as it travels in the JSON
/// body of `POST /iap/v1/transactions`.
///
/// ```json
/// {"outcome":"delivered","transactionId":"2000000000000001","finish":true}
/// {"outcome":"rejected","finish":false,"error":{"code":"bundleIdMismatch","message":"...","retryable":false}}
/// ```
public struct TransactionSubmissionResult: Sendable, Hashable {
    /// What the server did.
    public enum Outcome: String, Sendable, Hashable, Codable, CaseIterable {
        /// Recorded and granted now.
        case delivered
        /// Recorded and granted before.
        case alreadyDelivered
        /// Recorded; being granted right now. Submit again later.
        case pending
        /// Recorded, but given to nobody yet: the request named no user and no user is bound to the transaction's
        /// appAccountToken. Do not finish the transaction; submit it again with its user.
        case awaitingOwner
        /// Recorded; the grant failed and the server retries it. Submit again later.
        case deferred
        /// Recorded as refunded or revoked: nothing is granted.
        case revoked
        /// Not recorded: see ``TransactionSubmissionResult/error``.
        case rejected
    }

    /// What the server did.
    public var outcome: Outcome
    /// The transaction id, when the server read one.
    public var transactionId: String?
    /// Why the transaction was rejected or deferred.
    public var error: IAPError?

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - outcome: What the server did.
    ///   - transactionId: The transaction id, if known.
    ///   - error: Why it was rejected or deferred.
    public init(outcome: Outcome, transactionId: String?, error: IAPError? = nil) {
        self.outcome = outcome
        self.transactionId = transactionId
        self.error = error
    }

    /// The result of a pipeline's outcome.
    ///
    /// - Parameter outcome: What the pipeline did.
    public init(_ outcome: DeliveryOutcome) {
        let transactionId = outcome.entry?.transactionId
        switch outcome {
        case .delivered: self.init(outcome: .delivered, transactionId: transactionId)
        case .alreadyDelivered: self.init(outcome: .alreadyDelivered, transactionId: transactionId)
        case .pending: self.init(outcome: .pending, transactionId: transactionId)
        case .awaitingOwner: self.init(outcome: .awaitingOwner, transactionId: transactionId)
        case .deferred(_, let error): self.init(outcome: .deferred, transactionId: transactionId, error: error)
        case .revoked: self.init(outcome: .revoked, transactionId: transactionId)
        case .rejected(let error): self.init(outcome: .rejected, transactionId: nil, error: error)
        }
    }

    /// Whether the app may finish the StoreKit transaction: the server holds it durably, settled and given to its
    /// owner (delivered, already delivered, or revoked). Never for a transaction the ledger has given to nobody
    /// (``Outcome/awaitingOwner``).
    public var finish: Bool {
        switch outcome {
        case .delivered, .alreadyDelivered, .revoked: true
        case .pending, .awaitingOwner, .deferred, .rejected: false
        }
    }

    /// Whether submitting the same transaction again later can have another outcome.
    public var isRetryable: Bool {
        switch outcome {
        case .pending, .awaitingOwner, .deferred: true
        case .delivered, .alreadyDelivered, .revoked: false
        case .rejected: error?.isRetryable ?? false
        }
    }

    /// The HTTP status the answer travels with: `200` settled, `202` pending, awaiting its owner or deferred, `503`
    /// a rejection that may pass, `401` no authenticated user, `403` a user other than the authenticated one, `409`
    /// another user's purchase, `400` a malformed request or signed data, `422` any other rejection.
    public var httpStatus: Int {
        switch outcome {
        case .delivered, .alreadyDelivered, .revoked: return 200
        case .pending, .awaitingOwner, .deferred: return 202
        case .rejected:
            guard let error else { return 422 }
            if error.isRetryable {
                return 503
            }
            switch error.code {
            case .unauthenticated: return 401
            case .userMismatch: return 403
            case .ownershipConflict: return 409
            case .malformedRequest, .malformedSignedData, .invalidArgument: return 400
            default: return 422
            }
        }
    }
}

extension TransactionSubmissionResult: Codable {
    private struct WireError: Codable {
        var code: String
        var message: String
        var retryable: Bool
    }

    private enum CodingKeys: String, CodingKey {
        case outcome, transactionId, finish, error
    }

    /// Decodes the JSON answer.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` for an unknown outcome or a missing field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let outcome = try container.decode(Outcome.self, forKey: .outcome)
        let transactionId = try container.decodeIfPresent(String.self, forKey: .transactionId)
        let error = try container.decodeIfPresent(WireError.self, forKey: .error).map { wire in
            IAPError(IAPError.Code(wire.code), wire.message, isRetryable: wire.retryable)
        }
        self.init(outcome: outcome, transactionId: transactionId, error: error)
    }

    /// Encodes the JSON answer, `finish` included.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: An encoding error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(transactionId, forKey: .transactionId)
        try container.encode(finish, forKey: .finish)
        if let error {
            try container.encode(
                // For a deferred (or pending) answer the question is whether submitting again can help: it can.
                WireError(
                    code: error.code.rawValue,
                    message: error.message,
                    retryable: outcome == .rejected ? error.isRetryable : isRetryable
                ),
                forKey: .error
            )
        }
    }
}
