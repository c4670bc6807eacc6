import IAPCore
/// The acknowledgement of a mass renewal-date extension request.
///
/// Mirrors Apple's `MassExtendRenewalDateResponse`, with Apple's JSON names.
public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable {
    /// The request identifier that was sent.
    public var requestIdentifier: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        requestIdentifier: String? = nil
    ) {
        self.requestIdentifier = requestIdentifier
    }
}
