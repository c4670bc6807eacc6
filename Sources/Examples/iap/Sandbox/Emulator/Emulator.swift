import Foundation
import IAPCommandLine
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPInMemory
import IAPServerAPI
import IAPTesting

/// The local App Store behind `iap emulate`: a ``SimulatedAppStore`` answering the App Store Server API and the
/// emulator's control endpoints over HTTP.
///
/// - `/inApps/...`: the App Store Server API, with Apple's paths, JSON bodies, status codes and error bodies.
///   Every request needs a valid bearer token (``ServerAPITokenChecker``); injected faults apply here.
/// - `/emulator/v1/...`: control endpoints that play the customer and the App Store: purchases, refunds,
///   subscription events, the clock, faults, the root certificate, the notification log.
///
/// Every request passes the ``EmulatorControlPlane`` checks first (`Host`, `Origin`, the control token,
/// `Content-Type`). Every change to the store runs under one ``OperationLock``: it is applied, written to the journal
/// when it succeeded (with `--data`), and its notifications are handed to the ``NotificationDispatcher``, before the
/// next change starts.
final class Emulator: Sendable {
    /// Apple's page size for notification history.
    static let notificationPageSize = 20

    /// An injected failure of the next API requests.
    struct Fault: Sendable {
        var status: Int
        var remaining: Int
        var retryAfterMillis: Int64?
    }

    let store: SimulatedAppStore
    let clock: ManualClock
    let realClock: any WallClock
    let authenticator: ServerAPITokenChecker
    let dispatcher: NotificationDispatcher
    let journal: EmulatorJournal?
    let lock = OperationLock()
    let fault = LockedValue<Fault?>(nil)
    /// The checks of every request, set once the server listens (its port is known only then).
    let controlPlane = LockedValue<EmulatorControlPlane?>(nil)

    /// Creates the emulator around a store.
    ///
    /// - Parameters:
    ///   - store: The simulated store, running on `clock`.
    ///   - clock: The store's clock, which only `/emulator/v1/clock/advance` and subscription actions move.
    ///   - realClock: Real time, for token expiry and `Retry-After`.
    ///   - authenticator: Checks bearer tokens.
    ///   - dispatcher: Posts notifications.
    ///   - journal: The `--data` journal, or `nil`.
    init(
        store: SimulatedAppStore,
        clock: ManualClock,
        realClock: any WallClock,
        authenticator: ServerAPITokenChecker,
        dispatcher: NotificationDispatcher,
        journal: EmulatorJournal?
    ) {
        self.store = store
        self.clock = clock
        self.realClock = realClock
        self.authenticator = authenticator
        self.dispatcher = dispatcher
        self.journal = journal
    }

    /// Answers one request: the control plane's checks, then the route.
    ///
    /// - Parameter request: The request.
    /// - Returns: The answer; never throws, whatever the request holds.
    func respond(to request: HTTPServerRequest) async -> HTTPServerResponse {
        guard let plane = controlPlane.withLock({ $0 }) else {
            return Self.controlError(503, "the emulator is starting")
        }
        if let refusal = plane.refusal(of: request) {
            Output.error("note: \(refusal.status) for \(request.method) \(request.path): refused by the control plane")
            return refusal
        }
        return await route(request, replaying: false)
    }

    /// Replays the journal's entries, in order, without posting their notifications again.
    ///
    /// - Throws: ``IAPError`` `.invalidConfiguration` when an entry is answered differently than it was (another
    ///   catalog, say).
    func replayJournal() async throws {
        guard let journal else { return }
        for (index, entry) in journal.replay.enumerated() {
            let request: HTTPServerRequest
            do {
                request = try HTTPServerRequest(method: entry.method, target: entry.path, body: Data(entry.body.utf8))
            } catch {
                throw IAPError(.invalidConfiguration, "journal entry \(index + 1) has a malformed path")
            }
            let response = await route(request, replaying: true)
            let expected = entry.status.map { response.status == $0 } ?? (200...299).contains(response.status)
            guard expected else {
                throw IAPError(
                    .invalidConfiguration,
                    "journal entry \(index + 1) (\(entry.method) \(entry.path)) was answered \(entry.status ?? 200) "
                        + "but \(response.status) on replay: \(String(decoding: response.body, as: UTF8.self))"
                )
            }
        }
    }

    private func route(_ request: HTTPServerRequest, replaying: Bool) async -> HTTPServerResponse {
        let segments = request.pathSegments
        switch segments.first {
        case "inApps":
            if replaying {
                return await serverAPI(request, segments: Array(segments.dropFirst()), replaying: true)
            }
            if let reason = authenticator.rejection(of: request.headers["authorization"]) {
                Output.error("note: 401 for \(request.method) \(request.path): \(reason)")
                return HTTPServerResponse(status: 401)
            }
            if let injected = takeFault() {
                return injected
            }
            return await serverAPI(request, segments: Array(segments.dropFirst()), replaying: false)
        case "emulator" where segments.count >= 2 && segments[1] == "v1":
            return await control(request, segments: Array(segments.dropFirst(2)), replaying: replaying)
        default:
            return Self.controlError(404, "no such endpoint: \(request.method) \(request.path)")
        }
    }

    /// Applies a change under the lock: journals it when it succeeded and hands its notifications on.
    ///
    /// A change the journal has no room for is refused `507` before it is applied, so that what a restart replays
    /// is always what was answered.
    func change(
        _ request: HTTPServerRequest,
        replaying: Bool,
        journaled: Bool = true,
        _ body: @Sendable () async throws -> HTTPServerResponse
    ) async -> HTTPServerResponse {
        let store = self.store
        let dispatcher = self.dispatcher
        let journal = journaled && !replaying ? self.journal : nil
        do {
            return try await lock.run {
                var entry = EmulatorJournal.Entry(
                    method: request.method,
                    path: request.path,
                    body: String(decoding: request.body, as: UTF8.self),
                    status: 200
                )
                if let journal, !journal.hasRoom(for: try journal.line(for: entry).count) {
                    return Self.controlError(
                        507,
                        "the --data journal is full (\(journal.byteCount) of \(journal.maximumBytes) bytes): the change "
                            + "was not applied; start with a new --data directory or a larger --journal-limit"
                    )
                }
                var response: HTTPServerResponse
                do {
                    response = try await body()
                } catch {
                    response = Self.response(for: error)
                }
                // Only a change that succeeded is journaled: a refused one changed nothing (each store operation
                // is all-or-nothing), and a replay must not grow with junk.
                if (200...299).contains(response.status), let journal {
                    entry.status = response.status
                    do {
                        try journal.append(entry)
                    } catch {
                        Output.error("error: \(error)")
                        response = Self.controlError(500, "the change was applied but not journaled: \(error)")
                    }
                }
                let notifications = await store.drainNotifications()
                await dispatcher.enqueue(notifications, deliver: !replaying)
                return response
            }
        } catch {
            return Self.response(for: error)
        }
    }

    private func takeFault() -> HTTPServerResponse? {
        let taken = fault.withLock { fault -> Fault? in
            guard var current = fault, current.remaining > 0 else {
                fault = nil
                return nil
            }
            current.remaining -= 1
            fault = current.remaining > 0 ? current : nil
            return current
        }
        guard let taken else { return nil }
        if taken.status == 429 {
            var response = Self.apiError(.rateLimitExceeded, status: 429)
            let retryAt = realClock.now.millisecondsSince1970 + (taken.retryAfterMillis ?? 0)
            response.headers.add(name: "Retry-After", value: String(retryAt))
            return response
        }
        return Self.apiError(.generalInternal, status: taken.status)
    }

    // MARK: - Responses

    /// An App Store Server API error: `{"errorCode": N, "errorMessage": "..."}` with Apple's message.
    static func apiError(_ code: APIErrorCode, status: Int? = nil, message: String? = nil) -> HTTPServerResponse {
        HTTPServerResponse(SimulatedAppStoreServerAPI.apiError(code, status: status, message: message))
    }

    /// A control endpoint's error: `{"error": "..."}`.
    static func controlError(_ status: Int, _ message: String) -> HTTPServerResponse {
        HTTPServerResponse(SimulatedAppStoreServerAPI.controlError(status, message))
    }

    /// The answer to an error a store operation threw.
    static func response(for error: any Error) -> HTTPServerResponse {
        HTTPServerResponse(SimulatedAppStoreServerAPI.response(for: error))
    }

    /// A JSON answer of an `Encodable` value, dates in milliseconds as Apple's.
    static func json(_ value: some Encodable, status: Int = 200) -> HTTPServerResponse {
        HTTPServerResponse(SimulatedAppStoreServerAPI.json(value, status: status))
    }
}
