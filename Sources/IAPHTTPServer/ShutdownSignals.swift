#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import IAPCore

/// Waits for the signals that ask a server to stop, SIGINT and SIGTERM by default.
///
/// Creating it installs, for the whole process and before `init` returns, a handler for each of its signals: from
/// then on such a signal no longer ends the process, and it is never lost, whichever thread it reaches and however
/// busy the process is. A signal that arrives before anyone waits is kept: the next ``wait()`` returns it at once.
/// The handler only writes the signal's number to a pipe; a thread of its own reads the pipe and resumes the waiters,
/// so neither the concurrency pool nor dispatch has to run for a signal to be seen. Create it once, early, in the
/// program that embeds the server; the handlers stay installed after it is gone.
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

    private let state = LockedValue(State())
    private let subscription: Int

    /// Starts listening for SIGINT and SIGTERM.
    public convenience init() {
        self.init([SIGINT, SIGTERM])
    }

    /// Starts listening for some signals.
    ///
    /// - Parameter signals: The signal numbers (1 to 64; SIGKILL and SIGSTOP cannot be caught).
    public init(_ signals: [Int32]) {
        let state = self.state
        subscription = SignalRelay.shared.subscribe(Set(signals)) { number in
            Self.fire(number, state)
        }
    }

    deinit {
        SignalRelay.shared.unsubscribe(subscription)
    }

    private static func fire(_ number: Int32, _ state: LockedValue<State>) {
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

/// Calls a handler on every arrival of some signals (SIGHUP to reload a configuration, say), with the guarantees of
/// ``ShutdownSignals``: the handlers are installed before `init` returns, and no signal that arrives after is lost
/// (several arrivals before the handler runs may be seen as one).
///
/// The handler runs on the thread that relays signals, one call at a time: it should return quickly (start a `Task`
/// for longer work). It is no longer called once the observer is gone; the process's handlers stay installed.
///
/// ```swift
/// let reloads = SignalObserver([SIGHUP]) { _ in
///     Task { await reloadConfiguration() }
/// }
/// ```
public final class SignalObserver: Sendable {
    private let subscription: Int

    /// Starts observing `signals`.
    ///
    /// - Parameters:
    ///   - signals: The signal numbers (1 to 64; SIGKILL and SIGSTOP cannot be caught).
    ///   - handler: Called with the signal's number on each arrival.
    public init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        subscription = SignalRelay.shared.subscribe(Set(signals), deliver: handler)
    }

    deinit {
        SignalRelay.shared.unsubscribe(subscription)
    }
}

/// The write end of the relay's pipe, read by the signal handler: set once, before the first handler is installed,
/// and never changed after.
nonisolated(unsafe) private var signalRelayWriteEnd: Int32 = -1

/// The process-wide side of ``ShutdownSignals``: one pipe, one thread that reads it, the handlers installed so far
/// and who listens to which signal.
///
/// The handler is async-signal-safe: it writes one byte (the signal's number) to a non-blocking pipe and restores
/// `errno`. A full pipe (thousands of signals not yet read) drops the byte: the signals already in it are enough to
/// wake every waiter.
private final class SignalRelay: Sendable {
    private struct State {
        var installed: Set<Int32> = []
        var nextId = 0
        var subscribers: [Int: (signals: Set<Int32>, deliver: @Sendable (Int32) -> Void)] = [:]
    }

    static let shared = SignalRelay()

    private let readEnd: Int32
    private let state = LockedValue(State())

    private init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            // Without a pipe (or a thread to read it) no signal can be relayed: the handlers are then never
            // installed, and the signals keep their default action (they end the process, as if no ShutdownSignals
            // existed).
            readEnd = -1
            return
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        // The reading thread waits for this initializer to finish before it reads `readEnd`.
        guard Self.startReader() else {
            close(fds[0])
            close(fds[1])
            readEnd = -1
            return
        }
        readEnd = fds[0]
        signalRelayWriteEnd = fds[1]
    }

    /// Installs the handlers of `signals` not installed yet and records `deliver` for them; returns the
    /// subscription's id.
    func subscribe(_ signals: Set<Int32>, deliver: @escaping @Sendable (Int32) -> Void) -> Int {
        state.withLock { state in
            if readEnd >= 0 {
                for number in signals.subtracting(state.installed) where number > 0 && number < 65 {
                    _ = signal(number) { received in
                        let saved = errno
                        var byte = UInt8(truncatingIfNeeded: received)
                        _ = write(signalRelayWriteEnd, &byte, 1)
                        errno = saved
                    }
                    state.installed.insert(number)
                }
            }
            state.nextId += 1
            state.subscribers[state.nextId] = (signals, deliver)
            return state.nextId
        }
    }

    func unsubscribe(_ id: Int) {
        state.withLock { state in
            state.subscribers[id] = nil
        }
    }

    private func relay(_ number: Int32) {
        let targets = state.withLock { state in
            state.subscribers.values.filter { $0.signals.contains(number) }.map(\.deliver)
        }
        for deliver in targets {
            deliver(number)
        }
    }

    private func readForever() -> Never {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                for byte in buffer.prefix(count) {
                    relay(Int32(byte))
                }
            } else if count < 0, errno == EINTR {
                continue
            } else {
                // The read end is never closed; a read that fails otherwise cannot be retried usefully.
                while true {
                    pause()
                }
            }
        }
    }

    /// The reading thread, a thread of its own (not one of the concurrency pool's or of dispatch's), with every
    /// signal blocked so that the handlers run elsewhere.
    private static func startReader() -> Bool {
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        // The new thread inherits the creating thread's mask: block everything around its creation only.
        pthread_sigmask(SIG_SETMASK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        guard pthread_create(&thread, nil, { _ in SignalRelay.shared.readForever() }, nil) == 0 else { return false }
        #if canImport(Darwin)
            if let thread { pthread_detach(thread) }
        #else
            pthread_detach(thread)
        #endif
        return true
    }
}
