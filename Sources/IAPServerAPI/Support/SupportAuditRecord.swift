/// One support audit entry exactly as a log stores it: the bytes its successor's hash covers.
public struct SupportAuditRecord: Sendable, Hashable {
    /// Where it is stored, for messages: `line 7`, `row 7`, `entry 7`.
    public var location: String
    /// The stored bytes (one JSON object, without a line break).
    public var bytes: [UInt8]

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - location: Where it is stored.
    ///   - bytes: The stored bytes.
    public init(location: String, bytes: [UInt8]) {
        self.location = location
        self.bytes = bytes
    }
}
