/// An external purchase token the developer has not reported.
///
/// Mirrors Apple's `ExternalPurchaseToken`, sent in `EXTERNAL_PURCHASE_TOKEN` notifications. `tokenCreationDate` is
/// kept as the number Apple sends (milliseconds since 1970), as Apple's libraries do. The payload names no
/// environment; ``derivedEnvironment`` infers it from ``externalPurchaseId``.
public struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    /// The identifier of the token; it starts with `SANDBOX` in the sandbox.
    public var externalPurchaseId: String?
    /// When the token was created, in milliseconds since 1970.
    public var tokenCreationDate: Int64?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        externalPurchaseId: String? = nil,
        tokenCreationDate: Int64? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }
}

extension ExternalPurchaseToken {
    /// The environment the token belongs to, inferred the way Apple's libraries do.
    ///
    /// A token whose ``externalPurchaseId`` starts with `SANDBOX` is from the sandbox; any other is from
    /// production. `nil` when there is no identifier.
    public var derivedEnvironment: AppStoreEnvironment? {
        guard let externalPurchaseId else {
            return nil
        }
        return externalPurchaseId.hasPrefix("SANDBOX") ? .sandbox : .production
    }
}
