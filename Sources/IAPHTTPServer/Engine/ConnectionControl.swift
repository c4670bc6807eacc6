/// What the engine asks of one connection of the HTTP library underneath (implemented in `MicroHTTPD/`).
///
/// The engine calls ``suspend()`` and ``resume()`` only while it holds its lock, and never ``resume()`` once the
/// daemon is being stopped; libmicrohttpd never calls the engine while holding a lock of its own that these take,
/// so the order is always the engine's lock, then libmicrohttpd's.
protocol ConnectionControl: Sendable {
    /// Stops processing the connection until ``resume()``: on the connection's thread, inside the request callback.
    func suspend()
    /// Lets a suspended connection go on, from any thread; exactly once after each ``suspend()``.
    func resume()
    /// Cuts the connection off: its socket is shut down, and libmicrohttpd closes it on its own thread.
    func abort()
    /// Writes a whole answer on the socket itself and shuts its sending side: for an answer the library cannot
    /// queue any more (its body is being read), on the connection's thread, inside the request callback.
    ///
    /// - Returns: Whether every byte was written.
    func answerDirectly(_ bytes: [UInt8]) -> Bool
}
