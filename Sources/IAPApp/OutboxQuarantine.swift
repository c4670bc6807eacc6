#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// A purchase outbox that could not be read (damaged, or written by a newer version of the app) and was moved
/// aside, kept as it was, so that purchases go on with an empty outbox.
///
/// The purchases it held were never finished in the store, so the store hands them to the app again and they are
/// delivered: only their saved context (business order ids, the owners of random appAccountTokens) is lost, and
/// the server resolves the owner from the appAccountToken's binding. Keep the file for support.
public struct OutboxQuarantine: Sendable, Hashable, Codable {
    /// Where the unreadable bytes are now (for ``FilePurchaseOutboxStorage``, the path of the moved file).
    public var location: String
    /// When it was moved aside.
    public var date: Date
    /// The code of the failure that made it unreadable (`storageCorrupted`).
    public var errorCode: String
    /// What was wrong with it.
    public var errorMessage: String

    /// Creates a record of a quarantine.
    ///
    /// - Parameters:
    ///   - location: Where the bytes are now.
    ///   - date: When they were moved.
    ///   - error: Why they could not be read.
    public init(location: String, date: Date, error: IAPError) {
        self.location = location
        self.date = date
        self.errorCode = error.code.rawValue
        self.errorMessage = error.message
    }

    /// Why the outbox could not be read.
    public var error: IAPError {
        IAPError(IAPError.Code(errorCode), errorMessage)
    }
}
