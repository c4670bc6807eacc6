#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A wall clock that only moves when a test moves it.
///
/// Subscriptions, grace periods, retry backoff and token expiry all depend on the time; a
/// `ManualClock` makes every one of those decisions reproducible. It is safe to share between tasks.
///
/// ```swift
/// let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
/// clock.advance(by: .seconds(30 * 86_400))
/// ```
public final class ManualClock: WallClock {
    private let current: LockedValue<Date>

    /// Creates a clock showing `now`.
    ///
    /// - Parameter now: The initial instant.
    public init(now: Date) {
        self.current = LockedValue(now)
    }

    /// The instant the clock shows.
    public var now: Date {
        current.withLock { $0 }
    }

    /// Moves the clock forward (or, with a negative duration, back).
    ///
    /// - Parameter duration: How far to move.
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }

    /// Sets the clock to an instant.
    ///
    /// - Parameter instant: The new instant.
    public func set(_ instant: Date) {
        current.withLock { $0 = instant }
    }
}
