/// Routes requests by method and path to handlers, with path parameters.
///
/// ```swift
/// var router = HTTPRouter()
/// router.get("/iap/v1/users/{userId}/entitlements") { request in
///     let userId = request.pathParameter("userId") ?? ""
///     return .text("entitlements of \(userId)")
/// }
/// ```
///
/// A pattern's segments are literal (`users`), a parameter (`{userId}`, one segment, percent-decoded) or, last, the
/// rest of the path (`{path...}`). When several routes match, the most specific wins: segment by segment a literal
/// beats a parameter, which beats the rest. A `HEAD` request is routed to the `GET` route when there is no `HEAD`
/// route (the server sends no body). A path that matches no route is answered by ``fallback``, or `404`; a path that
/// matches only routes of other methods is answered `405` with `Allow` naming them.
public struct HTTPRouter: Sendable {
    struct Route: Sendable {
        let method: String
        let pattern: HTTPRoutePattern
        let handler: HTTPRequestHandler
    }

    private var routes: [Route] = []

    /// Answers a request no route matches (neither path nor method); `nil` answers `404` or `405`.
    public var fallback: HTTPRequestHandler?

    /// Creates a router with no routes.
    public init() {}

    /// Adds a route.
    ///
    /// - Parameters:
    ///   - method: The method, such as `GET`; compared exactly (methods are case-sensitive).
    ///   - pattern: The path pattern, such as `/iap/v1/users/{userId}/history`.
    ///   - handler: What answers it.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping HTTPRequestHandler) {
        routes.append(Route(method: method, pattern: HTTPRoutePattern(pattern), handler: handler))
    }

    /// Adds a `GET` route (which answers `HEAD` too).
    public mutating func get(_ pattern: String, _ handler: @escaping HTTPRequestHandler) {
        add("GET", pattern, handler)
    }

    /// Adds a `POST` route.
    public mutating func post(_ pattern: String, _ handler: @escaping HTTPRequestHandler) {
        add("POST", pattern, handler)
    }

    /// Adds a `PUT` route.
    public mutating func put(_ pattern: String, _ handler: @escaping HTTPRequestHandler) {
        add("PUT", pattern, handler)
    }

    /// Adds a `DELETE` route.
    public mutating func delete(_ pattern: String, _ handler: @escaping HTTPRequestHandler) {
        add("DELETE", pattern, handler)
    }

    /// Answers a request in process, as the server does: routing, then the handler.
    ///
    /// - Parameter request: The request.
    /// - Returns: The handler's answer, or `404`/`405`.
    /// - Throws: What the handler throws.
    public func respond(to request: HTTPServerRequest) async throws -> HTTPServerResponse {
        let resolved = resolve(request)
        return try await resolved.handler(resolved.request)
    }

    /// The handler of a request and the request with its route and path parameters.
    func resolve(_ request: HTTPServerRequest) -> (handler: HTTPRequestHandler, request: HTTPServerRequest) {
        var best: (route: Route, parameters: [String: String])?
        var allowed: Set<String> = []
        for method in request.method == "HEAD" ? ["HEAD", "GET"] : [request.method] {
            for route in routes where route.method == method {
                guard let parameters = route.pattern.match(request.pathSegments) else { continue }
                if let current = best, !route.pattern.isMoreSpecific(than: current.route.pattern) { continue }
                best = (route, parameters)
            }
            if best != nil { break }
        }
        if let best {
            var routed = request
            routed.route = best.route.pattern.text
            routed.pathParameters = best.parameters
            return (best.route.handler, routed)
        }
        for route in routes where route.pattern.match(request.pathSegments) != nil {
            allowed.insert(route.method)
        }
        if allowed.contains("GET") {
            allowed.insert("HEAD")
        }
        if let fallback {
            return (fallback, request)
        }
        if allowed.isEmpty {
            return ({ _ in .error(404, "no such endpoint") }, request)
        }
        let allow = allowed.sorted().joined(separator: ", ")
        return (
            { _ in
                var response = HTTPServerResponse.error(405, "method not allowed")
                response.headers.add(name: "Allow", value: allow)
                return response
            }, request
        )
    }
}
