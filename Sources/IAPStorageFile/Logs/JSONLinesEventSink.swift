#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// An ``EventSink`` that appends each ``IAPEvent`` to a file as one JSON object per line, for a log shipper, `jq` or
/// a person with `tail -f`.
///
/// Each line holds the keys `time` (milliseconds since 1970), `event`, `userId`, `productId`, `transactionId`,
/// `originalTransactionId`, `environment`, `outcome`, `errorCode`, `durationMs`, for a support action `auditHead`,
/// for `server.started` `address`, and for a notification `notificationType` and `notificationSubtype`; a key whose
/// value is unknown is absent. The operator's free-text ``IAPEvent/message`` is not written: the file is for machines.
///
/// ```json
/// {"durationMs":12,"environment":"Sandbox","event":"reconciliation.customer","outcome":"clean","time":1767603600000}
/// ```
///
/// The file is created private (0600), an existing one that its group or others could open is narrowed to 0600
/// (refused when that cannot be done), and opened for appending without following a symbolic link; several processes
/// may append to one file (each line is one `write`). ``record(_:)`` never throws and never waits for the disk to
/// flush: a line that cannot be written is counted in ``droppedEvents``, as the ``EventSink`` contract asks.
public final class JSONLinesEventSink: EventSink {
    /// The file (`/dev/stderr` for ``standardError()``).
    public let path: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let dropped = LockedValue(0)

    /// Opens (creating) the file for appending.
    ///
    /// - Parameter path: The file; created with mode 0600 when missing, narrowed to 0600 when its group or others
    ///   could open it.
    /// - Throws: ``IAPError`` `storageFailure` when the file cannot be opened (a missing directory, no permission, a
    ///   symbolic link in its place) or narrowed (another user's file).
    public init(path: String) throws {
        self.path = path
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW
        let descriptor = path.withCString { open($0, flags, 0o600) }
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw IAPError(.storageFailure, "cannot open the event log \(path): \(reason)")
        }
        // A file that was already there is narrowed to 0600 too: the events name users and transactions.
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 != 0,
            fchmod(descriptor, 0o600) != 0
        {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw IAPError(.storageFailure, "cannot make the event log \(path) private (chmod 600): \(reason)")
        }
        self.descriptor = descriptor
        self.ownsDescriptor = true
    }

    private init(path: String, borrowing descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
        self.ownsDescriptor = false
    }

    /// A sink that writes the lines to the process's standard error, for a server whose log shipper reads it (a
    /// container runtime, journald). Each line is one `write`, so lines of many tasks never mix.
    ///
    /// - Returns: The sink; standard error stays open when it is released.
    public static func standardError() -> JSONLinesEventSink {
        JSONLinesEventSink(path: "/dev/stderr", borrowing: 2)
    }

    deinit {
        if ownsDescriptor {
            close(descriptor)
        }
    }

    /// How many events could not be written (a full disk, an I/O error).
    public var droppedEvents: Int {
        dropped.withLock { $0 }
    }

    public func record(_ event: IAPEvent) {
        var bytes = Self.line(event)
        bytes.append(UInt8(ascii: "\n"))
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written != bytes.count {
            dropped.withLock { $0 += 1 }
        }
    }

    /// The JSON object of one event, without its newline.
    static func line(_ event: IAPEvent) -> [UInt8] {
        struct Line: Encodable {
            var time: Int64
            var event: String
            var userId: String?
            var productId: String?
            var transactionId: String?
            var originalTransactionId: String?
            var environment: String?
            var outcome: String?
            var errorCode: String?
            var durationMs: Int64?
            var auditHead: String?
            var address: String?
            var notificationType: String?
            var notificationSubtype: String?
        }
        let line = Line(
            time: event.time.millisecondsSince1970,
            event: event.event,
            userId: event.userId,
            productId: event.productId,
            transactionId: event.transactionId,
            originalTransactionId: event.originalTransactionId,
            environment: event.environment,
            outcome: event.outcome,
            errorCode: event.errorCode,
            durationMs: event.durationMs,
            auditHead: event.auditHead,
            address: event.address,
            notificationType: event.notificationType,
            notificationSubtype: event.notificationSubtype
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and optionals always encode.
        return (try? Array(encoder.encode(line))) ?? Array(#"{"event":"unencodable"}"#.utf8)
    }
}
