import IAPCore
import IAPHTTPServer

/// Whether the purchase server takes work: what `GET /readyz` answers.
///
/// Not ready until ``markReady()`` (the store is open), and not ready again from ``markStopping()`` on, so that a load
/// balancer stops sending requests while the server drains. `GET /healthz` answers `200` regardless, as long as the
/// process serves.
///
/// A named check that fails while purchases still flow (``setCheck(_:failing:)``, such as `support-audit` when the
/// support audit does not match the ledger's head and support actions are refused) leaves the server ready:
/// `GET /readyz` still answers `200`, so a load balancer keeps sending purchases, and lists the check as degraded
/// in its body (`degraded: support-audit: ...`), for a probe or a person to alert on.
public final class ServerReadiness: Sendable {
    private enum State {
        case starting
        case ready
        case stopping
    }

    private let state: LockedValue<State>
    private let failing = LockedValue<[String: String]>([:])

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

    /// The named checks that fail now, by name, each with what a probe may be told (no internal detail).
    public var degradedChecks: [(name: String, reason: String)] {
        failing.withLock { checks in checks.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
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

    /// Records whether a named check fails; a failing check degrades the server without making it not ready.
    ///
    /// - Parameters:
    ///   - name: The check, such as `support-audit`.
    ///   - reason: What fails, in words a client may read; `nil` when the check passes.
    public func setCheck(_ name: String, failing reason: String?) {
        failing.withLock { $0[name] = reason }
    }
}
