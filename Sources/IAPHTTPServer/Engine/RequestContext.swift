/// One request on its way through the engine, from its request line to its answer.
///
/// `@unchecked Sendable`: the `let`s never change; the fields under "connection thread" are touched only by the
/// library's thread that serves the connection (one at a time, in order); the fields under "engine lock" only
/// while ``ServerCore`` holds its lock.
final class RequestContext: @unchecked Sendable {
    /// Where a request stands.
    enum Phase {
        /// Its head and body are arriving.
        case receiving
        /// Its handler runs; the connection is suspended.
        case handling
        /// Its answer is ready and the connection resumed; the library will ask for it.
        case answered(HTTPServerResponse, close: Bool)
        /// Its answer is queued on the connection.
        case queued
        /// The library is done with it.
        case finished
    }

    /// Its connection.
    let connection: ConnectionContext
    /// The request target as sent.
    let target: String
    /// When its connection became ready for it: its deadline counts from here.
    let startedAt: ContinuousClock.Instant

    // MARK: Connection thread

    /// Whether the head has been read (the first request callback).
    var headSeen = false
    /// The method.
    var method = ""
    /// The HTTP version.
    var version = ""
    /// The header fields.
    var headers = HTTPHeaders()
    /// The body so far.
    var body: [UInt8] = []
    /// Whether the body passed the limit; what follows is dropped.
    var bodyTooLarge = false
    /// How many bytes were dropped after the limit.
    var droppedBytes = 0
    /// Whether a declared body over the limit is read and dropped to its end after the answer.
    var dropsDeclaredBody = false

    // MARK: Engine lock

    /// Where it stands.
    var phase = Phase.receiving
    /// Its handler's task, while it runs.
    var task: Task<Void, Never>?
    /// The route pattern that answered it, for events.
    var route: String?

    init(connection: ConnectionContext, target: String) {
        self.connection = connection
        self.target = target
        self.startedAt = connection.readySince
    }
}
