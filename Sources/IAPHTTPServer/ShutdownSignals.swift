#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch
import IAPCore

/// Waits for the signals that ask a server to stop, SIGINT and SIGTERM by default, with dispatch signal sources.
///
/// Creating it sets the signals' disposition to "ignore" for the whole process, so that they are delivered to the
/// sources instead of ending the process: create it once, early, in the program that embeds the server.
///
/// ```swift
/// let signals = ShutdownSignals()
/// let server = try HTTPServer(configuration: .init(), router: HTTPRouter())
/// let received = await signals.wait()
/// await server.shutdown()
/// // then flush and close the store
/// _ = received
/// ```
public final class ShutdownSignals: Sendable {
    private struct State {
        var received: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    /// The dispatch sources, only kept alive after `init`.
    private struct Sources: @unchecked Sendable {
        let all: [any DispatchSourceSignal]
    }

    private let sources: Sources
    private let state = LockedValue(State())

    /// Starts listening for SIGINT and SIGTERM.
    public convenience init() {
        self.init([SIGINT, SIGTERM])
    }

    /// Starts listening for some signals.
    ///
    /// - Parameter signals: The signal numbers.
    public init(_ signals: [Int32]) {
        var all: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            all.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        sources = Sources(all: all)
        for (source, number) in zip(all, signals) {
            source.setEventHandler { [weak self] in self?.fire(number) }
            source.resume()
        }
    }

    deinit {
        for source in sources.all {
            source.cancel()
        }
    }

    private func fire(_ number: Int32) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            state.received = state.received ?? number
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            waiter.resume(returning: number)
        }
    }

    /// The first signal received: at once if one already came, or when one comes.
    ///
    /// - Returns: The signal's number.
    public func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let received = state.withLock { state -> Int32? in
                if let received = state.received { return received }
                state.waiters.append(continuation)
                return nil
            }
            if let received {
                continuation.resume(returning: received)
            }
        }
    }
}
