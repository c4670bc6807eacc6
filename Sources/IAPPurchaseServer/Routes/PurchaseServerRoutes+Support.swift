#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer
import IAPServerAPI

extension PurchaseServerRoutes {
    /// `POST /iap/v1/support/orders/{orderId}/lookup`.
    @Sendable
    func lookUp(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await supportRequest(request) { support, orderId, actor in
            guard request.body.isEmpty || Self.isEmptyObject(request.body) else {
                return .failure(Self.failure(400, .malformedRequest, "a lookup takes no body"))
            }
            return .report(try await support.lookUp(orderId: orderId, actor: actor))
        }
    }

    /// `POST /iap/v1/support/orders/{orderId}/redeliver` with the optional body `{"userId": "..."}`.
    @Sendable
    func redeliver(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        await supportRequest(request) { support, orderId, actor in
            var userId: String?
            if !request.body.isEmpty {
                guard let body = try? JSONDecoder().decode(RedeliveryBody.self, from: request.body),
                    !JSONMemberNames.hasDuplicate([UInt8](request.body))
                else {
                    return .failure(Self.failure(400, .malformedRequest, #"the body is {"userId": "..."} or empty"#))
                }
                if let named = body.userId {
                    guard (try? DeliveryPipeline.validate(userId: named)) != nil,
                        named.count <= HS256UserAuthenticator.maximumUserIdLength
                    else {
                        return .failure(Self.failure(400, .invalidArgument, "userId is not a valid user id"))
                    }
                    userId = named
                }
            }
            return .report(try await support.redeliver(orderId: orderId, actor: actor, userId: userId))
        }
    }

    /// What a support handler decided.
    enum SupportAnswer {
        case report(OrderLookupReport)
        case failure(HTTPServerResponse)
    }

    /// The body of a redelivery: only `userId`, which may be absent or `null`.
    private struct RedeliveryBody: Decodable {
        let userId: String?

        private struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            for key in container.allKeys where key.stringValue != "userId" {
                throw DecodingError.dataCorruptedError(
                    forKey: key,
                    in: container,
                    debugDescription: "unknown key"
                )
            }
            userId = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "userId"))
        }
    }

    private static func isEmptyObject(_ body: Data) -> Bool {
        String(decoding: body, as: UTF8.self).filter { !$0.isWhitespace } == "{}"
    }

    /// The checks of every support endpoint — the service token, `X-Operator`, an order id, a configured order
    /// tool — then the handler, and its report as JSON (`404` for an order Apple does not know).
    private func supportRequest(
        _ request: HTTPServerRequest,
        _ handler: (OrderLookup, String, String) async throws -> SupportAnswer
    ) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        let operators = request.headers.values(for: "X-Operator")
        guard operators.count == 1, let actor = operators.first, !actor.allSatisfy(\.isWhitespace),
            !actor.isEmpty, actor.count <= Self.maximumOperatorLength,
            !actor.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            return Self.failure(
                400,
                .malformedRequest,
                "X-Operator must name who asks, for the audit log (1 to \(Self.maximumOperatorLength) characters, once)"
            )
        }
        guard let orderId = request.pathParameter("orderId"), !orderId.isEmpty, orderId.count <= 64,
            orderId.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        else {
            return Self.failure(400, .invalidArgument, "the order id is not valid")
        }
        guard let support else {
            return Self.failure(
                501,
                .unsupportedOperation,
                "support needs the App Store Server API of Production: start the server with --issuer-id, --key-id "
                    + "and --auth-key"
            )
        }
        do {
            switch try await handler(support, orderId, actor) {
            case .failure(let response):
                return response
            case .report(let report):
                return .json(try AppStoreJSON.makeEncoder().encode(report), status: report.found ? 200 : 404)
            }
        } catch let error as IAPError where error.code == .storageCorrupted {
            // The audit does not match the ledger's head: support is refused until an operator reseals it.
            report("service.failed", error, route: request.route ?? request.path)
            return Self.failure(
                503,
                error.code,
                "support actions are refused: the ledger or its support audit needs an operator (see GET /readyz)"
            )
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }
}
