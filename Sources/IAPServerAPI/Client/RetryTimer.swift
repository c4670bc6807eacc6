import IAPCore
/// The monotonic time of a client's retries: sleeping between attempts and measuring the retry budget.
///
/// It wraps any `Swift.Clock` with `Duration` steps, so tests can pass a clock that never really sleeps.
struct RetryTimer: Sendable {
    /// Sleeps for a duration; throws `CancellationError` when the task is cancelled.
    let sleep: @Sendable (Duration) async throws -> Void
    /// Starts a stopwatch: the returned closure tells the time elapsed since this call.
    let startStopwatch: @Sendable () -> @Sendable () -> Duration

    /// Wraps a clock.
    ///
    /// - Parameter clock: The clock to sleep on and read.
    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        self.sleep = { duration in
            try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
        }
        self.startStopwatch = {
            let start = clock.now
            return { start.duration(to: clock.now) }
        }
    }
}
