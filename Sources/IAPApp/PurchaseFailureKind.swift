public import IAPCore
/// What kind of failure a purchase met, so the interface can say the right thing.
public enum PurchaseFailureKind: String, Sendable, Hashable, CaseIterable {
    /// The customer cancelled: say nothing.
    case userCancelled
    /// A failure that may pass (no network, the server or the store unavailable): "try again later". Whatever
    /// was paid is kept and delivered later.
    case retryable
    /// The app, the store or the server is set up wrong (an unknown product, another bundle id, purchases not
    /// allowed): "not available", and fix the configuration.
    case configuration
    /// The signed data did not verify: "could not be confirmed"; never grant.
    case verification
    /// The app's server wants the customer to sign in again: "sign in to continue". Whatever was paid is kept and
    /// delivered after the sign-in.
    case authenticationRequired
    /// The request was made before and is still open (a refund already requested): "already requested".
    case alreadyRequested
    /// Anything else.
    case unknown

    /// Classifies an error.
    ///
    /// - Parameter error: The failure.
    /// - Returns: Its kind.
    public static func classify(_ error: IAPError) -> PurchaseFailureKind {
        switch error.code {
        case .userCancelled:
            return .userCancelled
        case .authenticationRequired, .unauthenticated, .userMismatch:
            return .authenticationRequired
        case .refundAlreadyRequested:
            return .alreadyRequested
        case .malformedSignedData, .unsupportedAlgorithm, .certificateInvalid, .certificateChainInvalid,
            .untrustedRoot, .certificateExpired, .missingAppleMarker, .signatureInvalid, .unexpectedPayload:
            return error.isRetryable ? .retryable : .verification
        case .unknownProduct, .bundleIdMismatch, .environmentMismatch, .appAppleIdMismatch,
            .unsignedEnvironmentRejected, .invalidConfiguration, .purchaseNotAllowed, .offerInvalid, .offerIneligible,
            .unsupportedOperation:
            return .configuration
        default:
            if error.isRetryable {
                return .retryable
            }
            switch error.code {
            case .transportFailure, .timeout, .storageFailure, .storageLocked: return .retryable
            default: return .unknown
            }
        }
    }
}
