#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif
import IAPCore

/// The state of one exchange of a ``URLSessionTransport``: the continuation of the waiting caller, the
/// response head, the body so far, and whether it already ended.
///
/// The first of completion, timeout, cancellation or an oversized body ends the exchange and resumes the
/// caller; everything after is ignored.
final class URLSessionTransportExchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var response: HTTPURLResponse?
        var body = Data()
        var outcome: Result<HTTPResponse, IAPError>?
    }

    let request: HTTPRequest
    let maximumResponseSize: Int
    private let task: URLSessionTask
    private let state = LockedValue(State())

    init(task: URLSessionTask, request: HTTPRequest, maximumResponseSize: Int) {
        self.task = task
        self.request = request
        self.maximumResponseSize = maximumResponseSize
    }

    /// Starts the task, or resumes the caller at once if the exchange already ended (cancelled early).
    func start(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let ended = state.withLock { state -> Result<HTTPResponse, IAPError>? in
            if let outcome = state.outcome {
                return outcome
            }
            state.continuation = continuation
            return nil
        }
        if let ended {
            continuation.resume(with: ended)
        } else {
            task.resume()
        }
    }

    /// Ends the exchange with an error and cancels the task.
    func fail(_ error: IAPError) {
        if finish(.failure(error)) {
            task.cancel()
        }
    }

    /// Records the response head; fails at once when the announced length is over the cap.
    func receive(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse else {
            fail(IAPError(.transportFailure, "\(request.url) did not answer with HTTP"))
            return false
        }
        if http.expectedContentLength > Int64(maximumResponseSize) {
            fail(oversized(http.expectedContentLength))
            return false
        }
        state.withLock { $0.response = http }
        return true
    }

    /// Appends body bytes; fails once the body is over the cap.
    func receive(_ data: Data) {
        let size = state.withLock { state -> Int in
            guard state.outcome == nil else {
                return 0
            }
            state.body.append(data)
            return state.body.count
        }
        if size > maximumResponseSize {
            fail(oversized(Int64(size)))
        }
    }

    /// Ends the exchange when the task completes.
    func complete(_ error: (any Error)?) {
        if let error {
            finish(.failure(Self.map(error, request: request)))
            return
        }
        let (response, body) = state.withLock { ($0.response, $0.body) }
        guard let response else {
            finish(.failure(IAPError(.transportFailure, "\(request.url) ended without a response")))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String {
                headers[name] = "\(value)"
            }
        }
        finish(.success(HTTPResponse(status: response.statusCode, headers: headers, body: body)))
    }

    /// Stores the outcome and resumes the caller; `false` if the exchange had already ended.
    @discardableResult
    private func finish(_ outcome: Result<HTTPResponse, IAPError>) -> Bool {
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>?? in
            guard state.outcome == nil else {
                return .none
            }
            state.outcome = outcome
            defer { state.continuation = nil }
            return .some(state.continuation)
        }
        guard let continuation else {
            return false
        }
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        return true
    }

    private func oversized(_ size: Int64) -> IAPError {
        IAPError(
            .decodingFailure,
            "the response of \(request.url) has \(size) bytes or more, over the \(maximumResponseSize) accepted"
        )
    }

    /// Maps a `URLSession` error to an ``IAPError``.
    static func map(_ error: any Error, request: HTTPRequest) -> IAPError {
        let what = "\(request.method) \(request.url)"
        guard let urlError = error as? URLError else {
            return IAPError(.transportFailure, "\(what) failed: \(error)", underlying: SendableErrorBox(error))
        }
        switch urlError.code {
        case .timedOut:
            return IAPError(.timeout, "\(what) timed out", underlying: SendableErrorBox(urlError))
        case .cancelled:
            return IAPError(.cancelled, "\(what) was cancelled", underlying: SendableErrorBox(urlError))
        default:
            return IAPError(
                .transportFailure,
                "\(what) failed: URLError \(urlError.code.rawValue) \(urlError.localizedDescription)",
                underlying: SendableErrorBox(urlError)
            )
        }
    }
}
