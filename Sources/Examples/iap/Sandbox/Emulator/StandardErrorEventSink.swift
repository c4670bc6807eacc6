import IAPCommandLine
import IAPCore

/// Writes the HTTP server's failures to standard error as `note:` lines: a handler that failed, an answer that
/// could not be sent, a request cut off at its deadline. Answers themselves are not logged.
struct StandardErrorEventSink: EventSink {
    /// The events worth a line.
    static let reported: Set<String> = ["http.handler.failed", "http.response.invalid", "http.deadline.exceeded"]

    func record(_ event: IAPEvent) {
        guard Self.reported.contains(event.event) else { return }
        Output.error("note: \(event.event): \(event.message ?? "")")
    }
}
