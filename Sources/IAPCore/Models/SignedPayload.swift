#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A payload the App Store signs as a JWS: a transaction, renewal information, a notification or an app
/// transaction.
///
/// The verifier decodes the payload of a JWS into a `SignedPayload` and validates the certificate chain at
/// ``signingDate`` when it checks offline, so that data signed while Apple's certificates were valid stays
/// verifiable after they expire.
///
/// ## Implementation requirements
/// - ``signingDate`` is the instant the App Store says it signed the data, read from the payload itself,
///   or `nil` when the payload does not say.
public protocol SignedPayload: Codable, Sendable {
    /// When the App Store signed the data: `signedDate`, or `receiptCreationDate` for an app transaction.
    var signingDate: Date? { get }
}
