import IAPCore

/// Whether the purchase server takes work: what `GET /readyz` answers.
///
/// Not ready until ``markReady()`` (the store is open), and not ready again from ``markStopping()`` on, so that a load
/// balancer stops sending requests while the server drains. `GET /healthz` answers `200` regardless, as long as the
/// process serves.
public final class ServerReadiness: Sendable {
    private enum State {
        case starting
        case ready
        case stopping
    }

    private let state: LockedValue<State>

    /// Creates the readiness.
    ///
    /// - Parameter ready: Whether the store is open already.
    public init(ready: Bool = false) {
        state = LockedValue(ready ? .ready : .starting)
    }

    /// Whether the server takes work now.
    public var isReady: Bool {
        state.withLock { $0 == .ready }
    }

    /// Says the store is open; ignored once stopping.
    public func markReady() {
        state.withLock { state in
            if state == .starting {
                state = .ready
            }
        }
    }

    /// Says the server is stopping: not ready any more, for good.
    public func markStopping() {
        state.withLock { $0 = .stopping }
    }
}
