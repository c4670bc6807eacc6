public import IAPCore

/// A ``Transport`` that answers in the same process, by calling a route: to run a client against a server
/// handler (``TransactionSubmissionHandler``, say) without sockets, and to cut the connection on demand.
///
/// ```swift
/// let transport = InProcessTransport { request in
///     let response = await handler.handle(body: request.body ?? Data())
///     return HTTPResponse(status: response.status, body: response.body)
/// }
/// transport.setReachable(false)   // the server is down: send throws a retryable transportFailure
/// ```
public final class InProcessTransport: Transport {
    /// Answers one request.
    public typealias Route = @Sendable (HTTPRequest) async throws -> HTTPResponse

    private struct State {
        var reachable = true
        var requests: [HTTPRequest] = []
    }

    private let route: Route
    private let state = LockedValue(State())

    /// Creates a transport that sends every request to `route`.
    ///
    /// - Parameter route: Answers one request.
    public init(_ route: @escaping Route) {
        self.route = route
    }

    /// Cuts the connection (every request fails with a retryable `transportFailure`) or restores it.
    ///
    /// - Parameter reachable: Whether requests reach the route.
    public func setReachable(_ reachable: Bool) {
        state.withLock { $0.reachable = reachable }
    }

    /// Every request sent, reachable or not, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// Sends the request to the route.
    ///
    /// - Parameter request: The request.
    /// - Returns: The route's answer.
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when unreachable or when the route throws anything
    ///   but an ``IAPError``; `cancelled` when the calling task is cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let reachable = state.withLock { state in
            state.requests.append(request)
            return state.reachable
        }
        guard reachable else {
            throw IAPError(.transportFailure, "the server is unreachable", isRetryable: true)
        }
        do {
            return try await route(request)
        } catch let error as IAPError {
            throw error
        } catch is CancellationError {
            throw IAPError(.cancelled, "the request was cancelled", isRetryable: true)
        } catch {
            throw IAPError(.transportFailure, "the exchange failed: \(error)", isRetryable: true)
        }
    }
}
