/// Where ``IAPEvent``s go: a log file, standard error, a metrics registry, a test's memory.
///
/// ## Implementation requirements
/// - ``record(_:)`` returns quickly and never throws: a slow or failing sink must not hold up a delivery. Buffer,
///   drop or count what cannot be written, and say so through the sink's own means.
/// - Safe to call from many tasks at once.
///
/// `InMemoryEventSink` in `IAPInMemory` keeps events for tests.
public protocol EventSink: Sendable {
    /// Records one event.
    ///
    /// - Parameter event: What happened.
    func record(_ event: IAPEvent)
}

/// An ``EventSink`` that keeps nothing: the default where no sink is given.
public struct DiscardingEventSink: EventSink {
    /// Creates the sink.
    public init() {}

    public func record(_ event: IAPEvent) {}
}
