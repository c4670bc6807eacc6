#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension PurchaseServerRoutes {
    /// `GET /iap/v1/users/{userId}/entitlements[?at=MILLIS]`.
    @Sendable
    func entitlements(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        guard let userId = Self.userId(request) else {
            return Self.failure(400, .invalidArgument, "the user id is not valid")
        }
        var instant = clock.now
        if let at = request.queryValue("at") {
            guard let milliseconds = Int64(at), milliseconds >= 0, milliseconds < 32_503_680_000_000 else {
                return Self.failure(400, .invalidArgument, "at is milliseconds since 1970")
            }
            instant = Date(millisecondsSince1970: milliseconds)
        }
        do {
            let listing = try await EntitlementListing.read(
                userId: userId,
                from: store,
                catalog: catalog,
                unknownProducts: unknownProducts,
                at: instant
            )
            return .json(try listing.jsonData())
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }

    /// `GET /iap/v1/users/{userId}/history?limit=N&cursor=C`.
    @Sendable
    func history(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        guard let userId = Self.userId(request) else {
            return Self.failure(400, .invalidArgument, "the user id is not valid")
        }
        var limit = 20
        if let text = request.queryValue("limit") {
            guard let value = Int(text), (1...200).contains(value) else {
                return Self.failure(400, .invalidArgument, "limit is a whole number from 1 to 200")
            }
            limit = value
        }
        let cursor = request.queryValue("cursor")
        if cursor?.isEmpty == true {
            return Self.failure(400, .invalidArgument, "cursor is the nextCursor of the page before")
        }
        do {
            let page = try await OrderHistory(store: store).page(userId: userId, cursor: cursor, limit: limit)
            return .json(try page.jsonData(userId: userId))
        } catch let error as IAPError where error.code == .invalidArgument {
            report("service.failed", error, route: request.route ?? request.path)
            return Self.failure(400, .invalidArgument, "cursor is not a cursor of this user's history")
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }
}
