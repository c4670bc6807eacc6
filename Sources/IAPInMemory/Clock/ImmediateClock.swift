import IAPCore

/// A `Swift.Clock` whose sleeps return at once, moving its time forward instead, for tests of retries and
/// backoff.
///
/// Each sleep is recorded in ``sleeps``. A linked ``ManualClock`` moves forward with it, so that code which
/// compares a `Retry-After` instant with a ``WallClock`` sees the time pass too.
///
/// ```swift
/// let wall = ManualClock(now: Date(millisecondsSince1970: 1_700_000_000_000))
/// let clock = ImmediateClock(linkedTo: wall)
/// // ... code under test sleeps on `clock` ...
/// #expect(clock.sleeps == [.milliseconds(500)])
/// ```
public final class ImmediateClock: Clock, Sendable {
    /// An instant of an ``ImmediateClock``: the time elapsed since it was made.
    public struct Instant: InstantProtocol, Sendable {
        /// The time since the clock was made.
        public var offset: Duration

        /// Creates an instant.
        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleeps: [Duration] = []
    }

    private let state = LockedValue(State())
    private let wallClock: ManualClock?

    /// Creates a clock at offset zero.
    ///
    /// - Parameter wallClock: A wall clock to move forward by each sleep, if any.
    public init(linkedTo wallClock: ManualClock? = nil) {
        self.wallClock = wallClock
    }

    /// The current instant.
    public var now: Instant {
        state.withLock { $0.now }
    }

    /// The resolution: one nanosecond.
    public var minimumResolution: Duration {
        .nanoseconds(1)
    }

    /// Every sleep so far, in order.
    public var sleeps: [Duration] {
        state.withLock { $0.sleeps }
    }

    /// Moves the time to `deadline` (if later) and returns at once.
    ///
    /// - Throws: `CancellationError` if the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let step = state.withLock { state -> Duration in
            let step = max(.zero, state.now.duration(to: deadline))
            state.sleeps.append(step)
            state.now = state.now.advanced(by: step)
            return step
        }
        wallClock?.advance(by: step)
        await Task.yield()
    }

    /// Moves the time forward without a sleep, as if work took this long.
    ///
    /// - Parameter duration: How far to move.
    public func advance(by duration: Duration) {
        state.withLock { $0.now = $0.now.advanced(by: duration) }
        wallClock?.advance(by: duration)
    }
}
