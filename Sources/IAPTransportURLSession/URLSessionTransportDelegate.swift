#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif
import IAPCore

/// The session delegate of a ``URLSessionTransport``: routes each task's events to its exchange, caps bodies
/// and refuses redirects to another origin (or every redirect).
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = LockedValue<[Int: URLSessionTransportExchange]>([:])
    /// Whether a redirect to the same origin is followed; none is when `false`.
    private let followsRedirects: Bool

    init(followsRedirects: Bool) {
        self.followsRedirects = followsRedirects
    }

    func register(_ exchange: URLSessionTransportExchange, for task: URLSessionTask) {
        let id = task.taskIdentifier
        exchanges.withLock { $0[id] = exchange }
    }

    func unregister(_ task: URLSessionTask) {
        let id = task.taskIdentifier
        _ = exchanges.withLock { $0.removeValue(forKey: id) }
    }

    private func exchange(_ task: URLSessionTask) -> URLSessionTransportExchange? {
        let id = task.taskIdentifier
        return exchanges.withLock { $0[id] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let accepted = exchange(dataTask)?.receive(response) ?? false
        completionHandler(accepted ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(dataTask)?.receive(data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let from = task.originalRequest?.url
        let to = request.url
        let sameOrigin =
            followsRedirects
            && from?.scheme?.lowercased() == to?.scheme?.lowercased()
            && from?.host?.lowercased() == to?.host?.lowercased()
            && from?.port == to?.port
        completionHandler(sameOrigin ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange(task)?.complete(error)
    }
}
