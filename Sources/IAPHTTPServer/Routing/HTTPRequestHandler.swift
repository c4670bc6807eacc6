/// Answers one request.
///
/// A handler runs as a task of its own while its connection is suspended, so it may `await` anything: a store, a
/// remote API. It is cancelled when the request's deadline passes or the server stops before it answers; an
/// error it throws is answered `500` with a neutral body and reported as an `http.handler.failed` event.
public typealias HTTPRequestHandler = @Sendable (HTTPServerRequest) async throws -> HTTPServerResponse
