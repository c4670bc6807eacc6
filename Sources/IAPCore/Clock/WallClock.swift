#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The calendar time that expiry decisions are made against.
///
/// Everything in swift-iap that asks "what time is it?" asks a `WallClock`, so a test can move time
/// with `ManualClock` and a server uses ``SystemClock``. Sleeping, timeouts and retry backoff use a
/// monotonic `Swift.Clock` instead; a `WallClock` is only for comparing against the App Store's dates.
///
/// ## Implementation requirements
/// - ``now`` is safe to read from any task at once.
/// - Successive reads never go backwards by more than the platform's clock does.
public protocol WallClock: Sendable {
    /// The current instant.
    var now: Date { get }
}

/// The wall clock of the machine.
public struct SystemClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// The current instant, read from the operating system.
    public var now: Date { Date() }
}
