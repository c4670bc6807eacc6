#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPHTTPServer

extension PurchaseServerRoutes {
    /// `GET /iap/v1/users/{userId}/entitlements[?at=MILLIS][&bundleId=ID]`: on a server of several apps, the
    /// entitlements in the app named (``app(of:)``), or without `bundleId` those in every app
    /// (``EntitlementListing/jsonData(userId:at:apps:)``).
    @Sendable
    func entitlements(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        guard let userId = Self.userId(request) else {
            return Self.failure(400, .invalidArgument, "the user id is not valid")
        }
        return await entitlements(of: userId, request)
    }

    /// `GET /iap/v1/me/entitlements`: the entitlements of the user the app's token names (the user JWT of
    /// `POST /iap/v1/transactions`), now; the same JSON as the service route's, for this user only.
    @Sendable
    func myEntitlements(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        let userId: String
        do {
            userId = try await users.authenticate(request)
            try DeliveryPipeline.validate(userId: userId)
        } catch {
            events.record(
                IAPEvent(
                    time: clock.now,
                    event: "request.unauthenticated",
                    outcome: "refused",
                    errorCode: IAPError.Code.unauthenticated.rawValue,
                    message: "GET /iap/v1/me/entitlements: "
                        + IAPError.wrapping(error, as: .unauthenticated, "no user").message
                )
            )
            var answer = Self.failure(401, .unauthenticated, "the request is not authenticated")
            answer.headers.add(name: "WWW-Authenticate", value: #"Bearer realm="iap""#)
            return answer
        }
        guard request.queryValue("at") == nil else {
            return Self.failure(400, .invalidArgument, "the app reads its entitlements now: at is not taken here")
        }
        return await entitlements(of: userId, request)
    }

    private func entitlements(of userId: String, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        var instant = clock.now
        if let at = request.queryValue("at") {
            guard let milliseconds = Int64(at), milliseconds >= 0, milliseconds < 32_503_680_000_000 else {
                return Self.failure(400, .invalidArgument, "at is milliseconds since 1970")
            }
            instant = Date(millisecondsSince1970: milliseconds)
        }
        // A server of several apps asked for no app: the user's entitlements in each app (a user id spans them).
        if request.queryValue("bundleId") == nil, servedApps.count > 1 {
            do {
                var apps: [(bundleId: String, listing: EntitlementListing)] = []
                for bundleId in servedApps {
                    apps.append((bundleId, try await listing(of: userId, at: instant, bundleId: bundleId)))
                }
                return .json(try EntitlementListing.jsonData(userId: userId, at: instant, apps: apps))
            } catch {
                return answer(error, route: request.route ?? request.path)
            }
        }
        let bundleId: String?
        switch app(of: request) {
        case .success(let named): bundleId = named
        case .failure(let refusal): return refusal.response
        }
        do {
            return .json(try await listing(of: userId, at: instant, bundleId: bundleId).jsonData())
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }

    /// A user's entitlements at an instant, in one app (`bundleId`) or in every purchase (`nil`), by the pipeline's
    /// catalog and policies.
    private func listing(of userId: String, at instant: Date, bundleId: String?) async throws -> EntitlementListing {
        try await EntitlementListing.read(
            userId: userId,
            from: store,
            catalog: catalog,
            unknownProducts: unknownProducts,
            proratedRefunds: proratedRefunds,
            at: instant,
            bundleId: bundleId
        )
    }

    /// `GET /iap/v1/users/{userId}/history?limit=N&cursor=C[&bundleId=ID]`: on a server of several apps, the orders of
    /// the app named (``app(of:)``).
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
        let filter: OrderHistoryFilter
        switch app(of: request) {
        case .success(let named): filter = OrderHistoryFilter(bundleId: named)
        case .failure(let refusal): return refusal.response
        }
        do {
            let page = try await OrderHistory(store: store).page(
                userId: userId,
                cursor: cursor,
                limit: limit,
                filter: filter
            )
            return .json(try page.jsonData(userId: userId))
        } catch let error as IAPError where error.code == .invalidArgument {
            report("service.failed", error, route: request.route ?? request.path)
            return Self.failure(400, .invalidArgument, "cursor is not a cursor of this user's history")
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }

    /// `GET /iap/v1/app-transactions/{appTransactionId}/history`: every purchase of one Apple Account in the app,
    /// newest first, each with its owner (``AppAccountHistory``'s JSON); `400` for an id that is not 1 to 64 visible
    /// ASCII characters.
    @Sendable
    func appAccountHistory(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        guard let appTransactionId = request.pathParameter("appTransactionId"),
            AppAccountHistory.isValid(appTransactionId: appTransactionId)
        else {
            return Self.failure(400, .invalidArgument, "the app transaction id is not valid")
        }
        do {
            return .json(try await AppAccountHistory.read(appTransactionId: appTransactionId, from: store).jsonData())
        } catch {
            return answer(error, route: request.route ?? request.path)
        }
    }

    /// `POST /iap/v1/users/{userId}/account-tokens` with the body `{"appAccountToken": "UUID"}`: binds the token to
    /// the user before the purchase (an app that makes a token per order registers it when the order is created),
    /// so that nobody else can claim a purchase that carries it.
    ///
    /// `201` bound now, `200` already bound to this user, `409` bound to another user (who is not named), `400` a
    /// body or token that is not a UUID, `422` a token the ``tokenOwnership`` check refuses to this user (not derived
    /// from them).
    @Sendable
    func bindAccountToken(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        if let refusal = refusingWithoutServiceToken(request) {
            return refusal
        }
        guard let userId = Self.userId(request) else {
            return Self.failure(400, .invalidArgument, "the user id is not valid")
        }
        struct Body: Decodable {
            var appAccountToken: String
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: request.body),
            !JSONMemberNames.hasDuplicate([UInt8](request.body)),
            let uuid = UUID(uuidString: body.appAccountToken),
            let token = AppAccountToken.normalized(body.appAccountToken)
        else {
            return Self.failure(400, .malformedRequest, #"the body is not {"appAccountToken": "<UUID>"}"#)
        }
        let route = request.route ?? request.path
        do {
            let bound = try await store.user(forAppAccountToken: token)
            if bound == nil, let tokenOwnership, !tokenOwnership.allows(uuid, for: userId) {
                report(
                    "service.refused",
                    IAPError(.ownershipConflict, "appAccountToken \(token) was not derived from user '\(userId)'"),
                    route: route
                )
                return Self.failure(422, .ownershipConflict, "the token was not made for this user")
            }
            switch try await store.bind(appAccountToken: token, to: userId) {
            case .bound:
                return Self.json(["appAccountToken": token, "outcome": "bound", "userId": userId], status: 201)
            case .alreadyBound:
                return Self.json(["appAccountToken": token, "outcome": "alreadyBound", "userId": userId])
            case .conflict(let holder):
                report(
                    "service.refused",
                    IAPError(.ownershipConflict, "appAccountToken \(token) is bound to '\(holder)', not '\(userId)'"),
                    route: route
                )
                return Self.failure(409, .ownershipConflict, "the token belongs to another user")
            }
        } catch {
            return answer(error, route: route)
        }
    }
}
