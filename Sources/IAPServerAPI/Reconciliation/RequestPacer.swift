import IAPCore

/// Spaces calls to the App Store Server API at most `requestsPerSecond` apart, sleeping on a `Swift.Clock`.
protocol RequestPacing: Sendable {
    /// Waits until the next request may go.
    ///
    /// - Throws: ``IAPError`` `cancelled` when the task is cancelled while it waits.
    func waitForTurn() async throws
}

/// A pacer on a concrete clock: each caller takes the next free slot at once (so concurrent callers never share
/// one), then sleeps until it.
final class RequestPacer<C: Clock>: RequestPacing where C.Duration == Duration {
    private let clock: C
    private let interval: Duration
    private let nextSlot = LockedValue<C.Instant?>(nil)

    /// The longest interval: a rate below one request in this many seconds (down to the smallest `Double`, whose
    /// inverse no `Duration` holds) is paced at it.
    static var longestInterval: Int64 { 1_000_000_000_000 }

    init(clock: C, requestsPerSecond: Double) {
        self.clock = clock
        guard requestsPerSecond > 0 else {
            self.interval = .zero
            return
        }
        let seconds = 1 / requestsPerSecond
        self.interval =
            seconds < Double(Self.longestInterval) ? .seconds(seconds) : .seconds(Self.longestInterval)
    }

    func waitForTurn() async throws {
        guard interval > .zero else { return }
        let now = clock.now
        let slot = nextSlot.withLock { next -> C.Instant in
            let slot = next.map { max($0, now) } ?? now
            next = slot.advanced(by: interval)
            return slot
        }
        if slot > now {
            do {
                try await clock.sleep(until: slot, tolerance: nil)
            } catch {
                throw IAPError.wrapping(error, as: .cancelled, "the wait for the next App Store request was cancelled")
            }
        }
    }
}

/// A pacer on any clock of durations (opens the existential).
func makeRequestPacer(clock: some Clock<Duration>, requestsPerSecond: Double) -> any RequestPacing {
    RequestPacer(clock: clock, requestsPerSecond: requestsPerSecond)
}
