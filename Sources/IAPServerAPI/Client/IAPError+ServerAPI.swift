#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

extension IAPError {
    /// Apple's error code of an App Store Server API error, as an ``APIErrorCode``; `nil` when the answer had
    /// none.
    public var apiError: APIErrorCode? {
        apiErrorCode.map(APIErrorCode.init(rawValue:))
    }

    /// Makes the error for a non-2xx App Store Server API answer.
    ///
    /// The message reads `"4040010 TransactionIdNotFoundError: Transaction id not found."`; an unknown code keeps
    /// its number, and a body without one gives only the HTTP status.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - payload: The decoded error body, when it could be decoded.
    ///   - retryAfter: The instant of the `Retry-After` header, if any.
    /// - Returns: An error with code `apiError`.
    static func serverAPI(
        status: Int,
        payload: ErrorPayload?,
        retryAfter: Date?
    ) -> IAPError {
        let apiCode = payload?.errorCode.map(APIErrorCode.init(rawValue:))
        var message: String
        if let apiCode {
            let name = apiCode.name ?? "UnknownError"
            let text = payload?.errorMessage ?? apiCode.summary ?? ""
            message = "\(apiCode.rawValue) \(name): \(text)"
        } else {
            message = "HTTP \(status)"
            if let text = payload?.errorMessage {
                message += ": \(text)"
            } else if status == 401 {
                message += ": the bearer token was rejected"
            }
        }
        let retryable = apiCode?.isRetryable == true || status == 429 || (500...599).contains(status)
        var error = IAPError(.apiError, message, isRetryable: retryable)
        error.httpStatus = status
        error.apiErrorCode = apiCode?.rawValue
        error.retryAfter = retryAfter
        return error
    }
}
