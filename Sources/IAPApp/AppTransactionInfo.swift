#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPCore

/// The App Store's record of the app's own download (StoreKit's `AppTransaction`): which version the customer
/// first bought, in which environment, and the `appTransactionId` that names the customer's account for this app
/// on the App Store Server API.
///
/// It is read from the signed data without verifying it; ``signedAppTransaction`` is the original, which the
/// server verifies (`Verifier`, kind `appTransaction`) before relying on it. With
/// ``PurchaseCoordinator/Configuration/sendsAppTransaction`` the coordinator sends it with every submission.
public struct AppTransactionInfo: Sendable, Hashable {
    /// The id of the customer's download of the app (iOS 18.4 and later report it; `nil` before).
    public var appTransactionId: String?
    /// The app version the customer first downloaded (`CFBundleVersion` on iOS, `CFBundleShortVersionString` on
    /// macOS): what a paid-to-free migration checks.
    public var originalApplicationVersion: String?
    /// The app version now.
    public var applicationVersion: String?
    /// When the customer first downloaded the app.
    public var originalPurchaseDate: Date?
    /// The App Store environment that signed it (`Sandbox`, `Production`, `Xcode`).
    public var environment: AppStoreEnvironment?
    /// The bundle id.
    public var bundleId: String?
    /// The app transaction as the App Store signed it (JWS).
    public var signedAppTransaction: String

    /// Reads a signed app transaction.
    ///
    /// - Parameter signedAppTransaction: The JWS (StoreKit's `jwsRepresentation` of `AppTransaction.shared`).
    /// - Throws: ``IAPError`` `.malformedSignedData` when it cannot be read.
    public init(signedAppTransaction: String) throws {
        let payload = try UnverifiedPayload.decode(
            AppTransactionPayload.self,
            from: signedAppTransaction,
            what: "app transaction"
        )
        appTransactionId = payload.appTransactionId
        originalApplicationVersion = payload.originalApplicationVersion
        applicationVersion = payload.applicationVersion
        originalPurchaseDate = payload.originalPurchaseDate
        environment = payload.receiptType
        bundleId = payload.bundleId
        self.signedAppTransaction = signedAppTransaction
    }
}
