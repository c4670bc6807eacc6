import IAPHTTPServer

/// Runs `body` with a server on a free loopback port, and stops the server after it, whatever `body` does.
func withServer<Result>(
    _ configuration: HTTPServer.Configuration = HTTPServer.Configuration(),
    router: HTTPRouter,
    _ body: (HTTPServer) async throws -> Result
) async throws -> Result {
    let server = try HTTPServer(configuration: configuration, router: router)
    do {
        let result = try await body(server)
        await server.shutdown(gracePeriod: .seconds(1))
        return result
    } catch {
        await server.shutdown(gracePeriod: .seconds(1))
        throw error
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout` (long, for a loaded machine: a
/// condition that holds returns at once).
///
/// - Returns: Whether it held.
func eventually(within timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
