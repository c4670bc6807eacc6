#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer

extension PurchaseServerRoutes {
    /// A JSON object of strings, keys sorted.
    static func json(_ object: [String: String], status: Int = 200) -> HTTPServerResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(object)) ?? Data("{}".utf8)
        return .json(body, status: status)
    }

    /// An error answer: `{"code": "<code>", "error": "<neutral message>"}`.
    static func failure(_ status: Int, _ code: IAPError.Code, _ message: String) -> HTTPServerResponse {
        json(["code": code.rawValue, "error": message], status: status)
    }

    /// The answer to a request without the credential its route needs, reported as `auth.refused`.
    func unauthorized(_ request: HTTPServerRequest, reason: String) -> HTTPServerResponse {
        events.record(
            IAPEvent(
                time: clock.now,
                event: "auth.refused",
                outcome: "401",
                errorCode: IAPError.Code.unauthenticated.rawValue,
                message: "\(request.method) \(request.route ?? request.path): \(reason)"
            )
        )
        var response = Self.failure(401, .unauthenticated, "the request is not authorized")
        response.headers.add(name: "WWW-Authenticate", value: #"Bearer realm="iap""#)
        return response
    }

    /// `nil` when the request carries the service token, else the `401` to answer.
    func refusingWithoutServiceToken(_ request: HTTPServerRequest) -> HTTPServerResponse? {
        service.isAuthorized(request) ? nil : unauthorized(request, reason: "no valid service token")
    }

    /// Reports a failure of a route with its detail, for the operator.
    func report(_ event: String, _ error: any Error, route: String) {
        let failure = IAPError.wrapping(error, as: .internalError, "the request failed")
        events.record(
            IAPEvent(
                time: clock.now,
                event: event,
                outcome: "failed",
                errorCode: failure.code.rawValue,
                message: "\(route): \(failure.message)"
            )
        )
    }

    /// The answer to a failure of a service endpoint: the code with a neutral message, the detail reported as
    /// `service.failed`.
    func answer(_ error: any Error, route: String) -> HTTPServerResponse {
        report("service.failed", error, route: route)
        let failure = IAPError.wrapping(error, as: .internalError, "the request failed")
        switch failure.code {
        case .invalidArgument, .malformedRequest:
            return Self.failure(400, failure.code, failure.message)
        case .unsupportedOperation:
            return Self.failure(501, failure.code, "this server cannot do that: see its configuration")
        case .apiError, .transportFailure, .timeout, .decodingFailure:
            var response = Self.failure(502, failure.code, "the App Store Server API did not answer as expected")
            if failure.isRetryable || failure.httpStatus == 429 {
                response.headers.add(name: "Retry-After", value: "5")
            }
            return response
        case .storageFailure, .storageLocked, .storageUnavailable, .storageAuthenticationFailed, .cancelled:
            var response = Self.failure(503, failure.code, "the ledger is not available now; try again")
            response.headers.add(name: "Retry-After", value: "5")
            return response
        default:
            return Self.failure(500, .internalError, "internal error")
        }
    }

    /// A path parameter that names a user, or `nil` when it is not a valid user id.
    static func userId(_ request: HTTPServerRequest) -> String? {
        guard let userId = request.pathParameter("userId"), userId.count <= HS256UserAuthenticator.maximumUserIdLength,
            !userId.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
            (try? DeliveryPipeline.validate(userId: userId)) != nil
        else { return nil }
        return userId
    }
}
