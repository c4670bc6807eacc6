#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore

extension AppStoreServerAPIClient {
    /// Where a request is sent: a base URL and the environment it serves.
    struct Target: Sendable, Equatable {
        var baseURL: URL
        var environment: AppStoreEnvironment
    }

    /// The environment the client was made for.
    var primaryTarget: Target {
        Target(baseURL: baseURL, environment: environment)
    }

    /// The Sandbox target of the Production-then-Sandbox fallback, when it is enabled.
    var fallbackTarget: Target? {
        guard options.fallsBackToSandbox else {
            return nil
        }
        return Target(baseURL: options.sandboxFallbackBaseURL ?? Self.sandboxBaseURL, environment: .sandbox)
    }

    /// Sends a request and decodes its JSON answer.
    ///
    /// - Parameters:
    ///   - endpoint: The request.
    ///   - type: The type of the answer.
    ///   - target: Where to send it; the client's environment, with the fallback if enabled, when `nil`.
    /// - Returns: The decoded answer and the target that gave it.
    /// - Throws: ``IAPError``.
    func call<Response: Decodable>(
        _ endpoint: APIEndpoint,
        as type: Response.Type,
        target: Target? = nil
    ) async throws -> (response: Response, target: Target) {
        let (response, answered) = try await exchange(endpoint, target: target)
        return (try decode(type, from: response, endpoint: endpoint), answered)
    }

    /// Sends a request whose successful answer has no body.
    ///
    /// - Parameter endpoint: The request.
    /// - Throws: ``IAPError``.
    func callWithoutResponse(_ endpoint: APIEndpoint) async throws {
        _ = try await exchange(endpoint, target: nil)
    }

    /// Sends a request, falling back to Sandbox when enabled and Production does not know the transaction.
    private func exchange(_ endpoint: APIEndpoint, target: Target?) async throws -> (HTTPResponse, Target) {
        if let target {
            return (try await send(endpoint, to: target), target)
        }
        let primary = primaryTarget
        guard endpoint.allowsSandboxFallback, let fallback = fallbackTarget else {
            return (try await send(endpoint, to: primary), primary)
        }
        do {
            return (try await send(endpoint, to: primary), primary)
        } catch let error as IAPError
            where error.apiError == .transactionIdNotFound || error.apiError == .originalTransactionIdNotFound
        {
            return (try await send(endpoint, to: fallback), fallback)
        }
    }

    /// Sends a request to one target, with retries, and returns its 2xx answer.
    private func send(_ endpoint: APIEndpoint, to target: Target) async throws -> HTTPResponse {
        let url = try makeURL(endpoint, base: target.baseURL)
        let elapsed = timer.startStopwatch()
        let mayRetry = endpoint.isIdempotent || options.retriesNonIdempotentRequests
        var attempt = 0
        var refreshedToken = false
        while true {
            attempt += 1
            if Task.isCancelled {
                throw IAPError(.cancelled, "\(endpoint.summary) was cancelled")
            }
            let request = try await makeRequest(endpoint, url: url)
            let failure: IAPError
            do {
                let response = try await transport.send(request)
                if (200...299).contains(response.status) {
                    guard response.body.count <= options.maximumResponseSize else {
                        var error = IAPError(
                            .decodingFailure,
                            "the answer to \(endpoint.summary) has \(response.body.count) bytes, more than the "
                                + "\(options.maximumResponseSize) accepted"
                        )
                        error.httpStatus = response.status
                        throw error
                    }
                    return response
                }
                if response.status == 401 && !refreshedToken {
                    // The token may have expired or been revoked: mint a fresh one, once, without counting it
                    // as an attempt. Apple rejected the request before doing anything, so this is safe for
                    // every method.
                    refreshedToken = true
                    attempt -= 1
                    await tokenProvider.invalidate()
                    continue
                }
                failure = apiError(from: response)
            } catch let error as IAPError where error.code == .decodingFailure {
                throw error
            } catch is CancellationError {
                throw IAPError(.cancelled, "\(endpoint.summary) was cancelled")
            } catch {
                failure = IAPError.wrapping(error, as: .transportFailure, "\(endpoint.summary) failed")
                if failure.code == .cancelled {
                    throw failure
                }
            }
            let transient = failure.isRetryable || failure.code == .timeout || failure.code == .transportFailure
            guard mayRetry, transient, attempt < options.maximumAttempts else {
                throw failure
            }
            let wait = waitBeforeRetry(after: failure, attempt: attempt)
            guard elapsed() + wait <= options.retryBudget else {
                throw failure
            }
            do {
                try await timer.sleep(wait)
            } catch {
                throw IAPError(.cancelled, "\(endpoint.summary) was cancelled while waiting to retry")
            }
        }
    }

    /// The wait before the next attempt: until `Retry-After` when Apple sent one, else exponential backoff
    /// with jitter.
    private func waitBeforeRetry(after failure: IAPError, attempt: Int) -> Duration {
        if let retryAfter = failure.retryAfter {
            let seconds = retryAfter.timeIntervalSince(wallClock.now)
            return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : .zero
        }
        let seconds = options.backoff.delay(afterAttempts: attempt)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Builds the absolute URL of an endpoint under a base URL.
    private func makeURL(_ endpoint: APIEndpoint, base: URL) throws -> URL {
        let query = endpoint.query.isEmpty ? nil : APIPercentEncoding.query(endpoint.query)
        guard let url = base.appending(encodedPath: endpoint.encodedPath, encodedQuery: query) else {
            throw IAPError(.invalidArgument, "cannot make a URL for \(endpoint.summary)")
        }
        return url
    }

    /// Builds the HTTP request of one attempt, with a token from the provider.
    private func makeRequest(_ endpoint: APIEndpoint, url: URL) async throws -> HTTPRequest {
        let token: String
        do {
            token = try await tokenProvider.token()
        } catch {
            throw IAPError.wrapping(error, as: .invalidConfiguration, "the bearer token provider failed")
        }
        var headers = [
            "Authorization": "Bearer \(token)",
            "Accept": "application/json",
            "User-Agent": Self.userAgent,
        ]
        if endpoint.body != nil {
            headers["Content-Type"] = "application/json"
        }
        return HTTPRequest(
            method: endpoint.method,
            url: url,
            headers: headers,
            body: endpoint.body,
            timeout: options.requestTimeout
        )
    }

    /// The error of a non-2xx answer.
    private func apiError(from response: HTTPResponse) -> IAPError {
        var payload: ErrorPayload?
        if !response.body.isEmpty, response.body.count <= options.maximumResponseSize {
            payload = try? JSONDecoder().decode(ErrorPayload.self, from: response.body)
        }
        return IAPError.serverAPI(
            status: response.status,
            payload: payload,
            retryAfter: Self.retryAfter(response.header("Retry-After"), now: wallClock.now)
        )
    }

    /// Reads a `Retry-After` header: Apple sends UNIX time in milliseconds; a small number is read as
    /// delta-seconds (RFC 9110).
    static func retryAfter(_ value: String?, now: Date) -> Date? {
        guard let value, let number = Int64(value.filter { !$0.isWhitespace }), number >= 0 else {
            return nil
        }
        if number >= 100_000_000_000 {
            return Date(millisecondsSince1970: number)
        }
        return now.addingTimeInterval(Double(number))
    }

    /// Decodes a 2xx answer.
    private func decode<Response: Decodable>(
        _ type: Response.Type,
        from response: HTTPResponse,
        endpoint: APIEndpoint
    ) throws -> Response {
        do {
            return try AppStoreJSON.makeDecoder().decode(type, from: response.body)
        } catch {
            var failure = IAPError(
                .decodingFailure,
                "the answer to \(endpoint.summary) is not a valid \(type): \(DecodingError.summary(of: error))",
                underlying: SendableErrorBox(error)
            )
            failure.httpStatus = response.status
            throw failure
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
