#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif
public import IAPCore

/// A ``Transport`` over `URLSession` (`FoundationNetworking` on Linux).
///
/// - Each request gets its own total deadline, ``HTTPRequest/timeout``: when it passes, the exchange is
///   abandoned and ``IAPError/Code/timeout`` is thrown, however slowly the bytes trickle in.
/// - Cancelling the calling task cancels the exchange and throws ``IAPError/Code/cancelled``.
/// - A redirect is followed only within the same scheme, host and port; a redirect elsewhere is returned as
///   the 3xx response it is, so that a bearer token never travels to another host. With
///   ``Redirects/none`` no redirect is followed at all: every 3xx is returned as it is (a signed webhook must
///   reach the address it was configured with, or fail).
/// - A body larger than ``maximumResponseSize`` is not read to its end: the exchange fails with
///   ``IAPError/Code/decodingFailure``.
/// - Every other failure (DNS, connection refused, TLS, reset) is ``IAPError/Code/transportFailure``, with the
///   `URLError` as the underlying error.
///
/// Make one transport and share it; each has its own `URLSession`.
public final class URLSessionTransport: Transport {
    /// Which redirects the transport follows.
    public enum Redirects: Sendable {
        /// Those within the same scheme, host and port; the default.
        case sameOrigin
        /// None: a 3xx is the response.
        case none
    }

    /// The largest response body accepted, in bytes.
    public let maximumResponseSize: Int
    /// Which redirects it follows.
    public let redirects: Redirects

    private let session: URLSession
    private let delegate: URLSessionTransportDelegate

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - configuration: The session configuration; ephemeral (no cookies, no cache) by default.
    ///   - maximumResponseSize: The largest response body accepted; 4 MiB by default.
    ///   - redirects: Which redirects to follow; same-origin ones by default, ``Redirects/none`` for none.
    public init(
        configuration: URLSessionConfiguration = .ephemeral,
        maximumResponseSize: Int = 4 * 1024 * 1024,
        redirects: Redirects = .sameOrigin
    ) {
        self.maximumResponseSize = maximumResponseSize
        self.redirects = redirects
        self.delegate = URLSessionTransportDelegate(followsRedirects: redirects == .sameOrigin)
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends a request and returns the response, whatever its status.
    ///
    /// - Parameter request: The request.
    /// - Returns: The response.
    /// - Throws: ``IAPError`` with code `timeout`, `cancelled`, `transportFailure` or, for a body over the cap,
    ///   `decodingFailure`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled {
            throw IAPError(.cancelled, "\(request.method) \(request.url) was cancelled before it started")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        // URLSession's own timeout is an idle timeout, and FoundationNetworking truncates it to whole seconds
        // (0.3 s would become "time out at once"); the watchdog below enforces the exact total deadline.
        urlRequest.timeoutInterval = max(request.timeout.timeInterval.rounded(.up), 1)
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData

        let task = session.dataTask(with: urlRequest)
        let exchange = URLSessionTransportExchange(
            task: task,
            request: request,
            maximumResponseSize: maximumResponseSize
        )
        delegate.register(exchange, for: task)
        let watchdog = Task {
            try await Task.sleep(for: request.timeout)
            exchange.fail(IAPError(.timeout, "\(request.method) \(request.url) took longer than \(request.timeout)"))
        }
        defer {
            watchdog.cancel()
            delegate.unregister(task)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                exchange.start(continuation)
            }
        } onCancel: {
            exchange.fail(IAPError(.cancelled, "\(request.method) \(request.url) was cancelled"))
        }
    }
}
