#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// The progress of a mass renewal-date extension: the body of the App Store Server API's Get Status of Subscription
/// Renewal Date Extensions.
///
/// Mirrors Apple's `MassExtendRenewalDateStatusResponse` (`GET
/// /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`), with Apple's JSON names.
public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable {
    /// The request identifier.
    public var requestIdentifier: String?
    /// Whether the App Store finished the extension.
    public var complete: Bool?
    /// When it finished.
    public var completeDate: Date?
    /// How many subscriptions were extended.
    public var succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        requestIdentifier: String? = nil,
        complete: Bool? = nil,
        completeDate: Date? = nil,
        succeededCount: Int64? = nil,
        failedCount: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
