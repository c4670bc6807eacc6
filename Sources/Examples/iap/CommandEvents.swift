import IAPCommandLine
import IAPCore
import IAPStorageFile

/// `--events FILE`: the operations events of a command, one JSON object per line (`JSONLinesEventSink`).
enum CommandEvents {
    /// The option, as a usage lists it.
    static let option = CommandSpec.Option.value(
        "events",
        "FILE",
        "append one JSON object per line (time, event, userId, productId, transactionId, originalTransactionId, "
            + "environment, outcome, errorCode, durationMs, auditHead, notificationType, notificationSubtype) to FILE, "
            + "created 0600 (an existing one narrowed "
            + "to 0600)"
    )

    /// The sink `--events` names, or one that keeps nothing.
    ///
    /// - Parameter arguments: The parsed arguments.
    /// - Returns: The sink.
    /// - Throws: A usage error when the file cannot be opened.
    static func sink(_ arguments: Arguments) throws(Arguments.UsageError) -> any EventSink {
        guard let path = try arguments.value("events") else {
            return DiscardingEventSink()
        }
        do {
            return try JSONLinesEventSink(path: path)
        } catch {
            throw .init(message: "--events: \((error as? IAPError)?.message ?? "\(error)")")
        }
    }
}
