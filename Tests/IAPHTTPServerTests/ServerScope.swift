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
