#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The decoded payload of a signed app transaction.
///
/// Mirrors Apple's `AppTransaction`: the customer's purchase of the app itself. Every field is optional; dates are
/// read with ``AppStoreJSON`` (Xcode writes `originalPurchaseDate` as year 1, `-62135769600000`) and unknown JSON
/// keys are ignored.
public struct AppTransactionPayload: SignedPayload, Hashable {
    /// The environment that signed the app transaction.
    public var receiptType: AppStoreEnvironment?
    /// The App Store identifier of the app; absent outside production.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The app version the transaction was signed for.
    public var applicationVersion: String?
    /// The App Store identifier of the app version.
    public var versionExternalIdentifier: Int64?
    /// When the App Store signed the app transaction.
    public var receiptCreationDate: Date?
    /// When the customer first bought the app.
    public var originalPurchaseDate: Date?
    /// The app version the customer first bought.
    public var originalApplicationVersion: String?
    /// A base64 hash the device uses to check the app transaction belongs to it.
    public var deviceVerification: String?
    /// The UUID used to compute ``deviceVerification``.
    public var deviceVerificationNonce: String?
    /// When the customer pre-ordered the app; `nil` if they did not.
    public var preorderDate: Date?
    /// The identifier of the customer's app download transaction.
    public var appTransactionId: String?
    /// The platform on which the customer first bought the app.
    public var originalPlatform: PurchasePlatform?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        receiptType: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        versionExternalIdentifier: Int64? = nil,
        receiptCreationDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        originalApplicationVersion: String? = nil,
        deviceVerification: String? = nil,
        deviceVerificationNonce: String? = nil,
        preorderDate: Date? = nil,
        appTransactionId: String? = nil,
        originalPlatform: PurchasePlatform? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionId = appTransactionId
        self.originalPlatform = originalPlatform
    }
}

extension AppTransactionPayload {
    /// The date the App Store signed the app transaction, ``receiptCreationDate``.
    public var signingDate: Date? { receiptCreationDate }
}
