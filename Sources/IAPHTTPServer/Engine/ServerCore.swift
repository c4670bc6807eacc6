import Dispatch
import IAPCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The engine between libmicrohttpd's callbacks and the handlers: it tracks connections and requests, collects
/// bodies within their limit, runs each handler as a task while its connection is suspended, enforces deadlines,
/// answers an overfull server `503`, and stops gracefully.
///
/// Every connection and request field marked "engine lock" is read and written inside ``state``'s lock, and so is
/// every ``ConnectionControl/suspend()`` and ``ConnectionControl/resume()``: a resume can never race a stop.
final class ServerCore: Sendable {
    /// What the library should do after a request callback.
    enum Decision {
        /// Go on reading.
        case proceed
        /// Nothing now: the connection is suspended until the handler answers.
        case wait
        /// Queue this answer; close the connection after it when `close`.
        case respond(HTTPServerResponse, close: Bool)
        /// Close the connection without an answer.
        case abort
    }

    private struct State {
        var connections: [ObjectIdentifier: ConnectionContext] = [:]
        var requestsInFlight = 0
        /// Set by ``beginShutdown()``: answers close their connections.
        var quiescing = false
        /// Set by ``forceStop()``: no handler starts and nothing is resumed any more.
        var stopping = false
        /// Set once the daemon has stopped.
        var stopped = false
    }

    let configuration: HTTPServer.Configuration
    private let router: HTTPRouter
    private let state = LockedValue(State())
    private let clock = ContinuousClock()
    private let timer: Timer

    /// The deadline timer: resumed in `init`, scheduled once by ``startSweeping()``, cancelled once.
    private struct Timer: @unchecked Sendable {
        let source: any DispatchSourceTimer
    }

    init(configuration: HTTPServer.Configuration, router: HTTPRouter) {
        self.configuration = configuration
        self.router = router
        timer = Timer(source: DispatchSource.makeTimerSource(queue: DispatchQueue(label: "IAPHTTPServer.deadlines")))
        // Resumed at once, unscheduled: a dispatch source must not be released while suspended, and a core whose
        // daemon failed to start is released without ever sweeping.
        timer.source.resume()
    }

    /// Starts checking deadlines, a few times per shortest limit.
    func startSweeping() {
        let shortest = min(configuration.requestDeadline, configuration.overflowGracePeriod, configuration.idleTimeout)
        let tick = min(max(shortest / 10, .milliseconds(50)), .milliseconds(500))
        let nanoseconds =
            Int(tick.components.seconds) * 1_000_000_000 + Int(tick.components.attoseconds / 1_000_000_000)
        timer.source.setEventHandler { [weak self] in self?.sweep() }
        timer.source.schedule(
            deadline: .now(),
            repeating: .nanoseconds(nanoseconds),
            leeway: .nanoseconds(nanoseconds / 4)
        )
    }

    /// Stops checking deadlines.
    func stopSweeping() {
        timer.source.cancel()
    }

    // MARK: - Counts

    /// The connections open now, overflow ones included.
    var openConnections: Int {
        state.withLock { $0.connections.count }
    }

    /// The requests between their request line and the end of their answer.
    var requestsInFlight: Int {
        state.withLock { $0.requestsInFlight }
    }

    /// Whether the daemon has stopped.
    var isStopped: Bool {
        state.withLock { $0.stopped }
    }

    // MARK: - Connections (the library's threads)

    /// A connection was accepted.
    func connectionOpened(control: any ConnectionControl, remoteAddress: String?) -> ConnectionContext {
        let now = clock.now
        return state.withLock { state in
            let overflow = state.connections.count >= configuration.maximumConnections
            let connection = ConnectionContext(
                control: control,
                overflow: overflow,
                remoteAddress: remoteAddress,
                now: now
            )
            state.connections[ObjectIdentifier(connection)] = connection
            return connection
        }
    }

    /// A connection was closed; its socket is closed right after.
    func connectionClosed(_ connection: ConnectionContext) {
        state.withLock { state in
            state.connections[ObjectIdentifier(connection)] = nil
            connection.request = nil
        }
    }

    /// A request line arrived.
    func requestStarted(on connection: ConnectionContext, target: String) -> RequestContext {
        state.withLock { state in
            let request = RequestContext(connection: connection, target: target)
            connection.request = request
            state.requestsInFlight += 1
            return request
        }
    }

    /// The library is done with a request: answered, or its connection closed.
    func requestFinished(_ request: RequestContext) {
        let now = clock.now
        let task = state.withLock { state -> Task<Void, Never>? in
            state.requestsInFlight -= 1
            let task = request.task
            request.task = nil
            request.phase = .finished
            let connection = request.connection
            if connection.request === request {
                connection.request = nil
            }
            connection.readySince = now
            connection.sendBy = nil
            return task
        }
        task?.cancel()
    }

    // MARK: - Requests (the connection's thread)

    /// The first request callback: the head is complete.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - method: Its method.
    ///   - version: Its HTTP version.
    ///   - headers: Its header fields.
    func headReceived(
        _ request: RequestContext,
        method: String,
        version: String,
        headers: HTTPHeaders
    ) -> Decision {
        request.headSeen = true
        request.method = method
        request.version = version
        request.headers = headers
        if request.connection.overflow {
            var busy = HTTPServerResponse.error(503, "the server is busy; try again")
            busy.headers.add(name: "Retry-After", value: "1")
            return answerNow(request, busy, event: "http.overloaded")
        }
        let codings = headers.values(for: "Transfer-Encoding")
        if !codings.isEmpty {
            // libmicrohttpd 0.9.75 reads the first Transfer-Encoding only, and a body in any coding but `chunked`
            // as one that never ends: anything else is refused here, before a byte of the body is read.
            guard codings.count == 1, Self.isChunked(codings[0]) else {
                return answerNow(request, .error(501, "the transfer coding is not supported"), close: true)
            }
            guard headers["Content-Length"] == nil else {
                return answerNow(
                    request,
                    .error(400, "Content-Length and Transfer-Encoding together are refused"),
                    close: true
                )
            }
        }
        let limit = configuration.maximumBodySize
        if let length = headers["Content-Length"], let declared = UInt64(length), declared > UInt64(limit) {
            // A client that is sending its body when the answer comes, and whose connection is then closed on unread
            // data, is reset: it may lose the answer (a "broken pipe" instead of 413). So a body not far larger than
            // the limit (up to 4 MiB past it, or twice the limit when that is more) is read and dropped after the
            // answer, and the connection closed once it has all arrived. A larger one, or a client that waits for
            // "100 Continue" before it sends, is answered with the head and closed.
            let allowance = UInt64(limit) + max(4 << 20, 2 * UInt64(limit))
            let waitsToSend = headers["Expect"]?.lowercased() == "100-continue"
            guard declared <= allowance, !waitsToSend else {
                return answerNow(request, Self.tooLarge(limit))
            }
            request.bodyTooLarge = true
            request.dropsDeclaredBody = true
            return answerDirectly(request, Self.tooLarge(limit))
        }
        return .proceed
    }

    /// Whether a `Transfer-Encoding` value is exactly the `chunked` coding (in any case, without surrounding spaces).
    private static func isChunked(_ value: String) -> Bool {
        let trimmed = value.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
        return String(decoding: trimmed.reversed(), as: UTF8.self).lowercased() == "chunked"
    }

    /// A piece of the body arrived.
    ///
    /// A body that passes the limit (a chunked one: a declared length over it was answered with the head) is
    /// answered `413` at once, written on the socket by the engine since libmicrohttpd cannot queue an answer while
    /// it reads a body; what follows is read and dropped, up to as much again, so that the client reads the answer
    /// before the connection closes.
    ///
    /// - Returns: `.proceed`, or `.abort` once far more than the limit was sent.
    func bodyReceived(_ request: RequestContext, _ bytes: UnsafeRawBufferPointer) -> Decision {
        let limit = configuration.maximumBodySize
        if request.bodyTooLarge {
            request.droppedBytes += bytes.count
            // A declared body was judged at its head (libmicrohttpd stops at its length).
            return !request.dropsDeclaredBody && request.droppedBytes > max(limit, 64 * 1024) ? .abort : .proceed
        }
        if request.body.count + bytes.count > limit {
            request.bodyTooLarge = true
            request.droppedBytes = request.body.count + bytes.count
            request.body = []
            return answerDirectly(request, Self.tooLarge(limit))
        }
        request.body.append(contentsOf: bytes)
        return .proceed
    }

    /// The request is complete, or its connection was resumed: start the handler, or hand over its answer.
    func requestReceived(_ request: RequestContext) -> Decision {
        let ready = state.withLock { _ -> Decision? in
            switch request.phase {
            case .answered(let response, let close):
                request.phase = .queued
                return .respond(response, close: close)
            case .handling:
                return .wait
            case .queued, .finished:
                return .abort
            case .receiving:
                return nil
            }
        }
        if let ready {
            if case .respond(let response, _) = ready {
                report(request, status: response.status)
            }
            return ready
        }
        if request.bodyTooLarge {
            return answerNow(request, Self.tooLarge(configuration.maximumBodySize))
        }
        let message: HTTPServerRequest
        do {
            message = try HTTPServerRequest(
                method: request.method,
                target: request.target,
                version: request.version,
                headers: request.headers,
                body: Data(request.body),
                remoteAddress: request.connection.remoteAddress
            )
        } catch {
            return answerNow(request, .error(400, "the request target is malformed"))
        }
        request.body = []
        let (handler, routed) = router.resolve(message)
        let started = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            request.phase = .handling
            request.route = routed.route
            request.connection.control.suspend()
            request.task = Task { [self] in
                let response = await run(handler, routed)
                finish(request, response)
            }
            return true
        }
        return started ? .wait : answerNow(request, Self.unavailable)
    }

    /// Runs a handler and turns what it returns or throws into an answer the library can send.
    private func run(_ handler: HTTPRequestHandler, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        let response: HTTPServerResponse
        do {
            response = try await handler(request)
        } catch {
            let code = (error as? IAPError)?.code.rawValue ?? IAPError.Code.internalError.rawValue
            record(
                "http.handler.failed",
                errorCode: code,
                message: "\(request.method) \(request.route ?? "(no route)"): \(error)"
            )
            return .error(500, "internal error")
        }
        guard let problem = Self.problem(of: response) else { return response }
        record(
            "http.response.invalid",
            errorCode: IAPError.Code.internalError.rawValue,
            message: "\(request.method) \(request.route ?? "(no route)"): \(problem)"
        )
        return .error(500, "internal error")
    }

    /// A handler answered: resume its connection with the answer, unless the deadline or a stop answered first.
    private func finish(_ request: RequestContext, _ response: HTTPServerResponse) {
        let now = clock.now
        state.withLock { state in
            guard case .handling = request.phase, !state.stopping else { return }
            let close = state.quiescing || !configuration.keepAlive || Self.asksToClose(response)
            request.phase = .answered(response, close: close)
            request.task = nil
            request.connection.sendBy = now.advanced(by: configuration.idleTimeout)
            request.connection.control.resume()
        }
    }

    /// An answer given without running a handler.
    private func answerNow(
        _ request: RequestContext,
        _ response: HTTPServerResponse,
        event: String? = nil,
        close forced: Bool = false
    ) -> Decision {
        let close = state.withLock { state -> Bool in
            request.phase = .queued
            return forced || state.quiescing || !configuration.keepAlive || request.connection.overflow
                || response.status == 413
        }
        report(request, status: response.status)
        if let event {
            record(event, outcome: String(response.status), message: request.connection.remoteAddress)
        }
        return .respond(response, close: close)
    }

    /// An answer written on the socket while the body is still arriving; the connection closes after it.
    ///
    /// - Returns: `.proceed` to read and drop what follows, or `.abort` when the answer could not be written whole.
    private func answerDirectly(_ request: RequestContext, _ response: HTTPServerResponse) -> Decision {
        state.withLock { _ in request.phase = .queued }
        report(request, status: response.status)
        let written = request.connection.control.answerDirectly(
            HTTPRawResponse.bytes(of: response, date: configuration.clock.now)
        )
        return written ? .proceed : .abort
    }

    // MARK: - Deadlines

    /// Cuts off what passed its deadline: a handler still running is cancelled and answered `503`; a connection
    /// still receiving (or sending past its time) is shut down.
    private func sweep() {
        let now = clock.now
        var expired: [String] = []
        state.withLock { state in
            for connection in state.connections.values where !connection.aborted {
                if let request = connection.request, case .handling = request.phase {
                    guard !state.stopping, now >= request.startedAt.advanced(by: configuration.requestDeadline)
                    else { continue }
                    request.task?.cancel()
                    request.task = nil
                    request.phase = .answered(Self.timedOut, close: true)
                    connection.sendBy = now.advanced(by: configuration.idleTimeout)
                    connection.control.resume()
                    expired.append("\(request.method) \(request.route ?? "(no route)"): the handler ran too long")
                    continue
                }
                var limit = connection.readySince.advanced(by: configuration.requestDeadline)
                if connection.overflow {
                    limit = connection.acceptedAt.advanced(by: configuration.overflowGracePeriod)
                } else if let sendBy = connection.sendBy {
                    limit = max(limit, sendBy)
                }
                guard now >= limit else { continue }
                connection.aborted = true
                connection.control.abort()
                if !connection.overflow {
                    // Only what the lock guards is read here: the head's fields belong to the connection's thread.
                    let what = connection.request == nil ? "a connection" : "a request"
                    expired.append("\(what) from \(connection.remoteAddress ?? "?") cut off: it took too long")
                }
            }
        }
        for message in expired {
            record("http.deadline.exceeded", errorCode: IAPError.Code.timeout.rawValue, message: message)
        }
    }

    // MARK: - Stopping

    /// Starts a graceful stop: answers from now on close their connections.
    ///
    /// - Returns: `false` when a stop had already begun.
    func beginShutdown() -> Bool {
        state.withLock { state in
            defer { state.quiescing = true }
            return !state.quiescing
        }
    }

    /// Ends the grace period: no handler starts any more, and every handler still running is cancelled and its
    /// connection resumed with a `503`. After this, nothing is ever resumed again, so the daemon may stop.
    ///
    /// - Returns: How many requests were answered so.
    @discardableResult
    func forceStop() -> Int {
        state.withLock { state in
            state.stopping = true
            var answered = 0
            for connection in state.connections.values {
                guard let request = connection.request, case .handling = request.phase else { continue }
                request.task?.cancel()
                request.task = nil
                request.phase = .answered(Self.unavailable, close: true)
                connection.control.resume()
                answered += 1
            }
            return answered
        }
    }

    /// The daemon has stopped.
    func markStopped() {
        state.withLock { $0.stopped = true }
    }

    // MARK: - Answers and events

    private static let unavailable: HTTPServerResponse = {
        var response = HTTPServerResponse.error(503, "the server is shutting down")
        response.headers.add(name: "Retry-After", value: "1")
        return response
    }()

    private static let timedOut = HTTPServerResponse.error(503, "the request took too long")

    private static func tooLarge(_ limit: Int) -> HTTPServerResponse {
        .error(413, "the body is larger than \(limit) bytes")
    }

    private static func asksToClose(_ response: HTTPServerResponse) -> Bool {
        response.headers.values(for: "Connection").contains { $0.lowercased().contains("close") }
    }

    /// What is wrong with a handler's answer, or `nil` when the library can send it.
    static func problem(of response: HTTPServerResponse) -> String? {
        guard (200...599).contains(response.status) else { return "status \(response.status) is not 200...599" }
        for field in response.headers {
            let tokenCharacters = Set("!#$%&'*+-.^_`|~".utf8)
            let validName =
                !field.name.isEmpty
                && field.name.utf8.allSatisfy {
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                        || tokenCharacters.contains($0)
                }
            guard validName else { return "header name '\(field.name)' is not an HTTP token" }
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                return "header \(field.name) holds a line break or NUL"
            }
        }
        return nil
    }

    /// Reports an answer as an `http.request` event.
    private func report(_ request: RequestContext, status: Int) {
        let route = state.withLock { _ in request.route }
        let elapsed = clock.now - request.startedAt
        record(
            "http.request",
            outcome: String(status),
            message: "\(request.headSeen ? request.method : "?") \(route ?? "(no route)")",
            duration: elapsed
        )
    }

    private func record(
        _ event: String,
        outcome: String? = nil,
        errorCode: String? = nil,
        message: String? = nil,
        duration: Duration? = nil
    ) {
        let milliseconds = duration.map { Int64(($0 / .milliseconds(1)).rounded()) }
        configuration.events.record(
            IAPEvent(
                time: configuration.clock.now,
                event: event,
                outcome: outcome,
                errorCode: errorCode,
                message: message,
                durationMs: milliseconds
            )
        )
    }
}
