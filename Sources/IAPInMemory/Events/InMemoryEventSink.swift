public import IAPCore

/// An ``EventSink`` that keeps every event in memory, in order, for tests to read.
public final class InMemoryEventSink: EventSink {
    private let state = LockedValue<[IAPEvent]>([])

    /// Creates an empty sink.
    public init() {}

    /// Every event recorded, oldest first.
    public var events: [IAPEvent] { state.withLock { $0 } }

    /// The events of one kind.
    ///
    /// - Parameter name: The ``IAPEvent/event`` name, such as `submission.rejected`.
    /// - Returns: Those events, oldest first.
    public func events(named name: String) -> [IAPEvent] {
        state.withLock { $0.filter { $0.event == name } }
    }

    public func record(_ event: IAPEvent) {
        state.withLock { $0.append(event) }
    }
}
