#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// A request to set the appAccountToken of a purchase: the body of the App Store Server API's Set App Account
/// Token.
///
/// Mirrors Apple's `UpdateAppAccountTokenRequest` (`PUT
/// /inApps/v1/transactions/{originalTransactionId}/appAccountToken`), with Apple's JSON names.
public struct UpdateAppAccountTokenRequest: Codable, Hashable, Sendable {
    /// The token that identifies the customer in the app's own accounts.
    public var appAccountToken: UUID

    /// Creates a request.
    public init(
        appAccountToken: UUID
    ) {
        self.appAccountToken = appAccountToken
    }
}
