public import Foundation
public import IAPCore
public import IAPServerAPI

/// The App Store Server API of a ``SimulatedAppStore``: Apple's paths, query parameters, JSON bodies, status codes
/// and error bodies, answered in process.
///
/// `iap emulate` serves it over HTTP and ``SimulatedAppStoreTransport`` hands it to an `AppStoreServerAPIClient`
/// without sockets; both answer the same requests the same way because both answer here. It answers the
/// read endpoints (transaction info, transaction and refund history, subscription statuses, order lookup) and
/// Finish Transaction, Get App Transaction Info (the customer's signed app transaction), Set App Account Token and
/// the renewal-date extensions (one subscription, all active subscribers of a product, and the status of the latter);
/// Look Up Order ID, as Apple's, exists in Production only (a Sandbox store answers it 404); consumption information v1
/// is answered with Apple's error body, as the simulated store does not model it. The
/// notification endpoints belong to whoever posts notifications (the emulator) and answer 404 here.
///
/// It does not check the bearer token: the caller does, with ``ServerAPITokenChecker``, before it asks.
public struct SimulatedAppStoreServerAPI: Sendable {
    /// The store that answers.
    public let store: SimulatedAppStore

    /// Creates the API of a store.
    ///
    /// - Parameter store: The simulated store.
    public init(store: SimulatedAppStore) {
        self.store = store
    }

    /// One request, as the router sees it.
    public struct Request: Sendable {
        /// The method, such as `GET`.
        public var method: String
        /// The percent-decoded path segments after `/inApps`, such as `["v2", "history", "2000000000000001"]`.
        public var segments: [String]
        /// The query pairs in order; a name may repeat.
        public var query: [(name: String, value: String)]
        /// The body; empty when there is none.
        public var body: Data

        /// Creates a request.
        ///
        /// - Parameters:
        ///   - method: The method.
        ///   - segments: The percent-decoded path segments after `/inApps`.
        ///   - query: The query pairs in order.
        ///   - body: The body.
        public init(
            method: String,
            segments: [String],
            query: [(name: String, value: String)] = [],
            body: Data = Data()
        ) {
            self.method = method
            self.segments = segments
            self.query = query
            self.body = body
        }

        /// Every value of a query parameter, in order.
        public func queryValues(_ name: String) -> [String] {
            query.filter { $0.name == name }.map(\.value)
        }

        /// The first value of a query parameter, or `nil` when it is absent.
        public func queryValue(_ name: String) -> String? {
            query.first { $0.name == name }?.value
        }
    }

    /// Answers one request.
    ///
    /// - Parameter request: The request; its bearer token was checked by the caller.
    /// - Returns: The answer: a JSON body with status 200, Apple's error body, or 404 for an unknown path. Never
    ///   throws, whatever the request holds.
    public func respond(to request: Request) async -> HTTPResponse {
        let store = self.store
        do {
            let route = ServerAPIRoute(method: request.method, segments: request.segments)
            if let captures = route.match(("GET", "v1/transactions/appTransactions/*")) {
                return Self.json(try await store.appTransactionInfo(anyTransactionId: captures[0]))
            } else if let captures = route.match(("GET", "v1/transactions/*")) {
                return Self.json(try await store.transactionInfo(transactionId: captures[0]))
            } else if let captures = route.match(("POST", "v1/transactions/*/finish")) {
                try await store.finishTransaction(transactionId: captures[0])
                return HTTPResponse(status: 200)
            } else if let captures = route.match(("GET", "v1/history/*"), ("GET", "v2/history/*")) {
                let query = try Self.historyRequest(request)
                return Self.json(
                    try await store.transactionHistory(
                        anyTransactionId: captures[0],
                        revision: request.queryValue("revision"),
                        request: query
                    )
                )
            } else if let captures = route.match(("GET", "v2/refund/lookup/*")) {
                return Self.json(
                    try await store.refundHistory(
                        anyTransactionId: captures[0],
                        revision: request.queryValue("revision")
                    )
                )
            } else if let captures = route.match(("GET", "v1/subscriptions/*")), captures[0] != "extend" {
                var statuses: [SubscriptionStatus] = []
                for value in request.queryValues("status") {
                    guard let raw = Int32(value), (1...5).contains(raw) else {
                        return Self.apiError(.invalidStatus)
                    }
                    statuses.append(SubscriptionStatus(rawValue: raw))
                }
                return Self.json(
                    try await store.allSubscriptionStatuses(anyTransactionId: captures[0], status: statuses)
                )
            } else if let captures = route.match(("GET", "v1/lookup/*")) {
                // Look Up Order ID exists in Production only: Apple's sandbox has no order ids, and answers 404.
                guard store.configuration.environment == .production else {
                    return HTTPResponse(status: 404)
                }
                return Self.json(try await store.lookUpOrderId(captures[0]))
            } else if route.match(("POST", "v1/subscriptions/extend/mass")) != nil {
                guard
                    let asked = try? AppStoreJSON.makeDecoder().decode(
                        MassExtendRenewalDateRequest.self,
                        from: request.body
                    )
                else {
                    return Self.apiError(.generalBadRequest, message: "The request body is not valid JSON.")
                }
                guard let reason = asked.extendReasonCode, (0...3).contains(reason.rawValue) else {
                    return Self.apiError(.invalidExtendReasonCode)
                }
                return Self.json(
                    try await store.extendRenewalDatesForAllActiveSubscribers(
                        productId: asked.productId ?? "",
                        days: Int(asked.extendByDays ?? 0),
                        requestIdentifier: asked.requestIdentifier ?? "",
                        storefrontCountryCodes: asked.storefrontCountryCodes ?? []
                    )
                )
            } else if let captures = route.match(("GET", "v1/subscriptions/extend/mass/*/*")) {
                return Self.json(
                    try await store.renewalExtensionStatus(productId: captures[0], requestIdentifier: captures[1])
                )
            } else if let captures = route.match(("PUT", "v1/subscriptions/extend/*")) {
                let asked = try Self.extendRenewalDateRequest(request.body)
                return Self.json(
                    try await store.extendRenewalDate(
                        originalTransactionId: captures[0],
                        days: Int(asked.extendByDays ?? 0),
                        requestIdentifier: asked.requestIdentifier ?? ""
                    )
                )
            } else if let captures = route.match(("PUT", "v2/transactions/consumption/*")) {
                try Self.checkTransactionId(captures[0])
                guard let request = try? JSONDecoder().decode(ConsumptionRequest.self, from: request.body) else {
                    return Self.apiError(.generalBadRequest, message: "The consumption information is not valid JSON.")
                }
                try await store.receiveConsumptionInformation(transactionId: captures[0], request)
                return HTTPResponse(status: 202)
            } else if let captures = route.match(("PUT", "v1/transactions/*/appAccountToken")) {
                try await store.setAppAccountToken(
                    originalTransactionId: captures[0],
                    appAccountToken: try Self.appAccountToken(request.body)
                )
                return HTTPResponse(status: 200)
            } else if route.match(("PUT", "v1/transactions/consumption/*")) != nil {
                let path = "/inApps/" + request.segments.joined(separator: "/")
                return Self.apiError(
                    .generalBadRequest,
                    message: "The emulator does not support \(request.method) \(path)."
                )
            } else {
                return HTTPResponse(status: 404)
            }
        } catch {
            return Self.response(for: error)
        }
    }

    /// An Extend a Subscription Renewal Date body: `extendByDays`, `extendReasonCode` (0 to 3) and
    /// `requestIdentifier`; 4000010 for a reason code outside them, the rest checked by the store.
    static func extendRenewalDateRequest(_ body: Data) throws -> ExtendRenewalDateRequest {
        guard let asked = try? AppStoreJSON.makeDecoder().decode(ExtendRenewalDateRequest.self, from: body) else {
            throw SimulatedAppStoreEngine.apiError(status: 400, code: 4_000_000, "The request body is not valid JSON.")
        }
        guard let reason = asked.extendReasonCode, (0...3).contains(reason.rawValue) else {
            throw SimulatedAppStoreEngine.apiError(status: 400, code: 4_000_010, "Invalid extend reason code.")
        }
        return asked
    }

    /// The token of a Set App Account Token body, `{"appAccountToken": "<UUID>"}`; 4000183 otherwise.
    static func appAccountToken(_ body: Data) throws -> UUID {
        struct Body: Decodable {
            var appAccountToken: String
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: body),
            let token = UUID(uuidString: body.appAccountToken)
        else {
            throw SimulatedAppStoreEngine.apiError(
                status: 400,
                code: 4_000_183,
                "The app account token is not a valid UUID."
            )
        }
        return token
    }

    // MARK: - Answers

    /// An App Store Server API error: `{"errorCode": N, "errorMessage": "..."}` with Apple's message.
    ///
    /// - Parameters:
    ///   - code: Apple's error code.
    ///   - status: The HTTP status; the code's own by default.
    ///   - message: The message; Apple's by default.
    /// - Returns: The answer.
    public static func apiError(_ code: APIErrorCode, status: Int? = nil, message: String? = nil) -> HTTPResponse {
        struct Body: Encodable {
            let errorCode: Int64
            let errorMessage: String
        }
        let text = message ?? code.summary ?? "An error occurred."
        let body = (try? JSONEncoder().encode(Body(errorCode: code.rawValue, errorMessage: text))) ?? Data()
        return jsonResponse(status ?? code.httpStatus ?? 400, body)
    }

    /// A control error of the emulator: `{"error": "..."}`.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - message: What went wrong.
    /// - Returns: The answer.
    public static func controlError(_ status: Int, _ message: String) -> HTTPResponse {
        let body = (try? JSONEncoder().encode(["error": message])) ?? Data()
        return jsonResponse(status, body)
    }

    /// The answer to an error a store operation threw: Apple's error body for an `apiError`, else a control error.
    ///
    /// - Parameter error: The error.
    /// - Returns: The answer.
    public static func response(for error: any Error) -> HTTPResponse {
        guard let error = error as? IAPError else {
            return controlError(500, "\(error)")
        }
        if error.code == .apiError, let code = error.apiErrorCode {
            return apiError(APIErrorCode(rawValue: code), status: error.httpStatus)
        }
        switch error.code {
        case .notFound:
            return controlError(404, error.message)
        case .invalidArgument, .invalidConfiguration:
            return controlError(400, error.message)
        default:
            return controlError(500, error.message)
        }
    }

    /// A JSON answer of an `Encodable` value, dates in milliseconds as Apple's.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - status: The HTTP status.
    /// - Returns: The answer.
    public static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        do {
            return jsonResponse(status, try AppStoreJSON.makeEncoder().encode(value))
        } catch {
            return controlError(500, "cannot encode the answer: \(error)")
        }
    }

    private static func jsonResponse(_ status: Int, _ body: Data) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    // MARK: - Checks

    /// Rejects an id that is not a number, as Apple does with 4000006.
    static func checkTransactionId(_ id: String) throws {
        guard !id.isEmpty, id.count <= 20, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            var error = IAPError(.apiError, "Invalid transaction id")
            error.apiErrorCode = APIErrorCode.invalidTransactionId.rawValue
            error.httpStatus = 400
            throw error
        }
    }

    /// The filters of a transaction history request, from its query, with Apple's errors for bad values.
    static func historyRequest(_ request: Request) throws -> TransactionHistoryRequest {
        func fail(_ code: APIErrorCode) -> IAPError {
            var error = IAPError(.apiError, code.summary ?? "Invalid request")
            error.apiErrorCode = code.rawValue
            error.httpStatus = code.httpStatus ?? 400
            return error
        }
        var result = TransactionHistoryRequest()
        if let value = request.queryValue("startDate") {
            guard let millis = Int64(value), millis >= 0 else { throw fail(.invalidStartDate) }
            result.startDate = Date(millisecondsSince1970: millis)
        }
        if let value = request.queryValue("endDate") {
            guard let millis = Int64(value), millis >= 0 else { throw fail(.invalidEndDate) }
            result.endDate = Date(millisecondsSince1970: millis)
        }
        let productIds = request.queryValues("productId")
        if !productIds.isEmpty {
            guard productIds.allSatisfy({ !$0.isEmpty }) else { throw fail(.invalidProductId) }
            result.productIds = productIds
        }
        let types = request.queryValues("productType")
        if !types.isEmpty {
            result.productTypes = try types.map {
                guard let type = TransactionHistoryRequest.ProductType(rawValue: $0) else {
                    throw fail(.invalidProductType)
                }
                return type
            }
        }
        if let value = request.queryValue("sort") {
            guard let sort = TransactionHistoryRequest.Order(rawValue: value) else { throw fail(.invalidSort) }
            result.sort = sort
        }
        let groups = request.queryValues("subscriptionGroupIdentifier")
        if !groups.isEmpty {
            guard groups.allSatisfy({ !$0.isEmpty }) else { throw fail(.invalidSubscriptionGroupIdentifier) }
            result.subscriptionGroupIdentifiers = groups
        }
        if let value = request.queryValue("inAppOwnershipType") {
            guard value == "PURCHASED" || value == "FAMILY_SHARED" else { throw fail(.invalidInAppOwnershipType) }
            result.inAppOwnershipType = InAppOwnershipType(rawValue: value)
        }
        if let value = request.queryValue("revoked") {
            // Apple's Python client sends `True` and `False`.
            switch value.lowercased() {
            case "true": result.revoked = true
            case "false": result.revoked = false
            default: throw fail(.invalidRevoked)
            }
        }
        return result
    }
}
