/// The app a notification is about and its signed app transaction.
///
/// Mirrors Apple's `AppData`, sent in `RESCIND_CONSENT` notifications. ``signedAppTransactionInfo`` is a compact
/// JWS still to be verified.
public struct AppData: Codable, Hashable, Sendable {
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The environment the notification is for.
    public var environment: AppStoreEnvironment?
    /// The app transaction, as a JWS to verify.
    public var signedAppTransactionInfo: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
