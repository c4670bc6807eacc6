/// One accepted connection, as the engine tracks it.
///
/// `@unchecked Sendable`: the `let`s never change, and the `var`s are read and written only while the engine
/// (``ServerCore``) holds its lock.
final class ConnectionContext: @unchecked Sendable {
    /// The library's handle on the connection.
    let control: any ConnectionControl
    /// Whether it was accepted beyond ``HTTPServer/Configuration/maximumConnections``: it is answered `503`.
    let overflow: Bool
    /// The client's IP address.
    let remoteAddress: String?
    /// When it was accepted.
    let acceptedAt: ContinuousClock.Instant

    /// When it became ready for its current request: accepted, or its previous answer sent.
    var readySince: ContinuousClock.Instant
    /// While an answer is on its way: when sending must be done.
    var sendBy: ContinuousClock.Instant?
    /// The request it carries now.
    var request: RequestContext?
    /// Whether the engine cut it off.
    var aborted = false

    init(control: any ConnectionControl, overflow: Bool, remoteAddress: String?, now: ContinuousClock.Instant) {
        self.control = control
        self.overflow = overflow
        self.remoteAddress = remoteAddress
        self.acceptedAt = now
        self.readySince = now
    }
}
