#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The one error type every swift-iap API throws.
///
/// An `IAPError` names the check that failed (``code``), says what happened in words a person can act
/// on (``message``), and keeps the cause when there is one (``underlying``). Errors from the App Store
/// Server API also carry the HTTP status, Apple's numeric error code and whether a retry can help.
///
/// Two errors compare equal when their codes are equal, so tests can write
/// `#expect(throws: IAPError(.signatureInvalid)) { ... }`.
public struct IAPError: Error, Sendable, CustomStringConvertible {
    /// What failed. New codes may be added in any release, so never `switch` exhaustively over them.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable, machine-readable name of the code, such as `"signatureInvalid"`.
        public let rawValue: String

        /// Creates a code with a stable name.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        // MARK: Signed data

        /// The input is not a well-formed compact JWS, or a part of it is not what the App Store sends.
        public static let malformedSignedData = Code("malformedSignedData")
        /// The JWS header names an algorithm other than ES256.
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")
        /// A certificate in `x5c` cannot be parsed, or the key in it is not what is required.
        public static let certificateInvalid = Code("certificateInvalid")
        /// The certificate chain does not validate: a signature, a validity period or a CA constraint failed.
        public static let certificateChainInvalid = Code("certificateChainInvalid")
        /// The chain does not end in a configured root certificate.
        public static let untrustedRoot = Code("untrustedRoot")
        /// A certificate is outside its validity period at the validation instant.
        public static let certificateExpired = Code("certificateExpired")
        /// The certificate's issuer says, over OCSP, that it was revoked (`RevocationCheckingVerifier`'s optional
        /// online checks).
        public static let certificateRevoked = Code("certificateRevoked")
        /// The leaf or intermediate certificate lacks Apple's marker extension.
        public static let missingAppleMarker = Code("missingAppleMarker")
        /// The ES256 signature does not match the signed data.
        public static let signatureInvalid = Code("signatureInvalid")
        /// The payload belongs to another app.
        public static let bundleIdMismatch = Code("bundleIdMismatch")
        /// The payload's App Store environment is not the expected one.
        public static let environmentMismatch = Code("environmentMismatch")
        /// The payload's App Apple ID is not the expected one.
        public static let appAppleIdMismatch = Code("appAppleIdMismatch")
        /// The payload is well signed but is not the kind of object that was asked for.
        public static let unexpectedPayload = Code("unexpectedPayload")
        /// Data signed by Xcode or for local testing was offered without opting in.
        public static let unsignedEnvironmentRejected = Code("unsignedEnvironmentRejected")

        // MARK: Keys and configuration

        /// A key cannot be parsed or is not a P-256 key.
        public static let invalidKey = Code("invalidKey")
        /// The configuration of a component is invalid (a missing root, an out-of-range option, ...).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// An argument is outside what the operation accepts.
        public static let invalidArgument = Code("invalidArgument")
        /// The product is not in the catalog.
        public static let unknownProduct = Code("unknownProduct")

        // MARK: Delivery and storage

        /// The durable store failed; nothing was changed.
        public static let storageFailure = Code("storageFailure")
        /// The stored data is damaged.
        public static let storageCorrupted = Code("storageCorrupted")
        /// Another process holds the store.
        public static let storageLocked = Code("storageLocked")
        /// The store cannot be reached: the database server refused the connection, did not answer in time,
        /// or dropped the connection. Nothing was changed, unless the message says the outcome is unknown.
        public static let storageUnavailable = Code("storageUnavailable")
        /// The database server refused the credentials (wrong user or password, or no access rule admits them).
        public static let storageAuthenticationFailed = Code("storageAuthenticationFailed")
        /// The store's schema was migrated by a newer version of swift-iap than this one, which must not write it.
        public static let storageSchemaTooNew = Code("storageSchemaTooNew")
        /// A file or directory where swift-iap keeps data is a symbolic link, or not a regular file (or directory):
        /// it is refused, never followed, and whatever it points to is left untouched.
        public static let unsafeFile = Code("unsafeFile")
        /// The purchase belongs to another user: its appAccountToken is bound to (or, by a
        /// ``TokenOwnershipCheck``, derived from) another user, or the ledger records it for another user.
        public static let ownershipConflict = Code("ownershipConflict")
        /// A sandbox purchase reached a production server whose ``SandboxPolicy`` is ``SandboxPolicy/refuse``.
        public static let sandboxPurchaseRefused = Code("sandboxPurchaseRefused")
        /// The integrator's fulfillment hook failed.
        public static let fulfillmentFailed = Code("fulfillmentFailed")
        /// The integrator's fulfillment hook refused the delivery for good (a webhook answered `410` or `422`):
        /// no retry can mend it, so the pipeline dead-letters it at once, for a person to look at.
        public static let fulfillmentRefused = Code("fulfillmentRefused")
        /// The record does not exist.
        public static let notFound = Code("notFound")
        /// The backend does not implement an optional operation of its protocol (such as a store without
        /// ``EntitlementStore/originalTransactionIds(cursor:limit:)``).
        public static let unsupportedOperation = Code("unsupportedOperation")

        // MARK: Reconciliation and support

        /// A renewal-date extension would break Apple's limits: more than two extensions of one subscription
        /// within 365 days.
        public static let extensionLimitReached = Code("extensionLimitReached")
        /// A request identifier was used before with other parameters.
        public static let requestIdentifierReused = Code("requestIdentifierReused")

        // MARK: App purchases

        /// The customer cancelled the purchase or the refund request.
        public static let userCancelled = Code("userCancelled")
        /// The device's store refused the purchase (purchases disabled, parental controls, not eligible).
        public static let purchaseNotAllowed = Code("purchaseNotAllowed")
        /// The App Store revoked the purchase (a refund, or Family Sharing ended).
        public static let purchaseRevoked = Code("purchaseRevoked")
        /// A request body is not what the endpoint accepts.
        public static let malformedRequest = Code("malformedRequest")
        /// The server refused to deliver the purchase; the code of its answer is in the message.
        public static let deliveryRejected = Code("deliveryRejected")
        /// The request carries no authenticated user where the server requires one.
        public static let unauthenticated = Code("unauthenticated")
        /// The user the request names is not the user it is authenticated as.
        public static let userMismatch = Code("userMismatch")
        /// The app's server wants the customer to sign in again (it answered 401 or 403, or the app had no
        /// credentials to send); the purchase is kept and delivered after the next sign-in.
        public static let authenticationRequired = Code("authenticationRequired")
        /// The App Store refused a subscription offer: an unknown or inactive offer id, a signature that does not
        /// verify or has expired, missing offer parameters, or an offer price that is no longer valid.
        public static let offerInvalid = Code("offerInvalid")
        /// The customer is not eligible for the subscription offer.
        public static let offerIneligible = Code("offerIneligible")
        /// The App Store already has a refund request for this purchase.
        public static let refundAlreadyRequested = Code("refundAlreadyRequested")
        /// The App Store could not take the refund request (an unknown transaction, or a failure on its side).
        public static let refundRequestFailed = Code("refundRequestFailed")

        // MARK: Network

        /// The HTTP exchange failed before a response arrived.
        public static let transportFailure = Code("transportFailure")
        /// The HTTP exchange timed out.
        public static let timeout = Code("timeout")
        /// The operation was cancelled.
        public static let cancelled = Code("cancelled")
        /// The App Store Server API answered with an error.
        public static let apiError = Code("apiError")
        /// A response could not be decoded.
        public static let decodingFailure = Code("decodingFailure")

        // MARK: Other

        /// An error that fits no other code.
        public static let internalError = Code("internalError")
    }

    /// What failed.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The cause, when another error led to this one.
    public var underlying: (any Error & Sendable)?
    /// The HTTP status of an App Store Server API answer, when there was one.
    public var httpStatus: Int?
    /// Apple's numeric error code from an App Store Server API error body (`errorCode`), when there was one.
    public var apiErrorCode: Int64?
    /// Whether the same request may succeed if tried again later.
    public var isRetryable: Bool
    /// When Apple asked to be called again (the `Retry-After` header of a 429 answer).
    public var retryAfter: Date?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What failed.
    ///   - message: A human-readable explanation; defaults to the code's name.
    ///   - underlying: The cause, if any.
    ///   - isRetryable: Whether trying again may help.
    public init(
        _ code: Code,
        _ message: String? = nil,
        underlying: (any Error & Sendable)? = nil,
        isRetryable: Bool = false
    ) {
        self.code = code
        self.message = message ?? code.rawValue
        self.underlying = underlying
        self.httpStatus = nil
        self.apiErrorCode = nil
        self.isRetryable = isRetryable
        self.retryAfter = nil
    }

    public var description: String {
        "\(code.rawValue): \(message)"
    }
}

extension IAPError: LocalizedError {
    /// The code and the message, `signatureInvalid: the ES256 signature does not match`: what `localizedDescription`
    /// shows on every platform, where it would otherwise say only that the operation could not be completed.
    public var errorDescription: String? {
        description
    }
}

extension IAPError: Equatable {
    /// Two errors are equal when their codes are equal.
    public static func == (lhs: IAPError, rhs: IAPError) -> Bool {
        lhs.code == rhs.code
    }
}

extension IAPError: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }
}

extension IAPError {
    /// Wraps any error as an `IAPError`: an `IAPError` is returned as it is, anything else becomes `code`.
    ///
    /// - Parameters:
    ///   - error: The error to wrap.
    ///   - code: The code for an error that is not already an `IAPError`.
    ///   - message: The message for a wrapped error.
    /// - Returns: An `IAPError`.
    public static func wrapping(_ error: any Error, as code: Code, _ message: String) -> IAPError {
        if let iap = error as? IAPError {
            return iap
        }
        return IAPError(code, "\(message): \(error)", underlying: SendableErrorBox(error))
    }
}

/// Carries a non-`Sendable` error's description as a `Sendable` value.
public struct SendableErrorBox: Error, Sendable, CustomStringConvertible {
    /// The wrapped error's description.
    public let description: String

    /// Captures an error's description.
    public init(_ error: any Error) {
        self.description = String(describing: error)
    }
}
