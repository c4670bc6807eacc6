#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// One attempt of the App Store to send a notification.
///
/// Mirrors Apple's `SendAttemptItem`, with Apple's JSON names.
public struct SendAttemptItem: Codable, Hashable, Sendable {
    /// When the App Store tried.
    public var attemptDate: Date?
    /// What happened.
    public var sendAttemptResult: SendAttemptResult?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        attemptDate: Date? = nil,
        sendAttemptResult: SendAttemptResult? = nil
    ) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
